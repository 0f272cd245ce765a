## Philox4x32-10 counter-based random numbers (Salmon, Moraes, Dror, Shaw: "Parallel random
## numbers: as easy as 1, 2, 3", SC11; the constants of Random123).
## Inputs:
##   name    kernel name
##   kind    'float': floats of `dtype` (float32: 4 per block, float64: 2, 53 bits from two
##                    words); mode 0: a + b * u, u uniform in [0, 1); 1: a + b * z, z standard
##                    normal by Box-Muller on pairs of uniforms; 2: a + b * e, e = -log(1 - u)
##           'int':   integers of `dtype`: low + v, v uniform in [0, range) by Lemire's
##                    multiply with rejection (thresh = 2^w mod range); narrow (w = 32): one
##                    word per element, 4 per block, range <= 2^32; wide (w = 64): two words,
##                    2 per block, range 0 meaning 2^64 (the raw words)
##           'cdf':   int64 indices searchsorted(cdf / total, u, side='right') of uniforms u
##                    of `dtype` (4 or 2 per block, as 'float'), for choice(p=)
##   dtype   numpy dtype name: of the output ('float', 'int') or of cdf and u ('cdf')
## Defines: ga_philox(counter, key), the 10 rounds; __kernel void ${name}(out, n, k0, k1, s0,
##   s1, pos, <kind's arguments>): work-item g computes the block of counter (pos + g as two
##   words, s0, s1) and key (k0, k1) and writes elements g * per_block ... of out, so element
##   i depends only on (key, stream, pos, i). A rejected word of block b, lane j, attempt a
##   is replaced by word j of the block of the same counter under key (k0, k1 ^ a * W0).
<%! import gpuarr.kernels.cltypes as t %>\
<%
    T = t.storage(dtype)
    C = t.ctype(dtype)
    f64 = dtype == 'float64'
    lanes = 2 if f64 else 4
    F = 'double' if f64 else 'float'
    OUT = 'long' if kind == 'cdf' else T
%>\
${t.fp64_pragma([dtype])}
// numpy rounds every operation: no contraction of a*b+c into fma.
#pragma OPENCL FP_CONTRACT OFF

// Rounds unrolled; each mulhilo as one 32x32->64 product, which PoCL vectorises across
// work-items (4x faster there than mul_hi) and GPU compilers turn into a wide multiply.
inline uint4 ga_philox(uint4 c, uint2 k)
{
% for r in range(10):
% if r:
    k += (uint2)(0x9E3779B9u, 0xBB67AE85u);
% endif
    {
        const ulong p0 = (ulong)0xD2511F53u * c.x, p1 = (ulong)0xCD9E8D57u * c.z;
        c = (uint4)((uint)(p1 >> 32) ^ c.y ^ k.x, (uint)p1, (uint)(p0 >> 32) ^ c.w ^ k.y,
                    (uint)p0);
    }
% endfor
    return c;
}

<%def name="prologue(per_block)">\
    const ulong g = get_global_id(0);
    const ulong first = g * ${per_block};
    if (first >= n) return;
    const ulong blk = pos + g;
    const uint4 ctr = (uint4)((uint)blk, (uint)(blk >> 32), s0, s1);
    const uint4 w = ga_philox(ctr, (uint2)(k0, k1));
</%def>\
## Uniforms u0.. of the block's words: float32 from the top 24 bits of a word, float64 from
## the top 53 bits of two words (the first the high half).
<%def name="uniforms()">\
% if f64:
    const double u0 = (double)((((ulong)w.x << 32) | w.y) >> 11) * 0x1.0p-53;
    const double u1 = (double)((((ulong)w.z << 32) | w.w) >> 11) * 0x1.0p-53;
% else:
% for j in range(4):
    const float u${j} = (float)(w.s${j} >> 8) * 0x1.0p-24f;
% endfor
% endif
</%def>\
## Stores v0..v<count-1> (of type `vt`) at out[first + j]: one vector store for a whole block.
<%def name="stores(count, vt)">\
    if (first + ${count} <= n) {
        vstore${count}((${vt}${count})(${', '.join('v%d' % j for j in range(count))}), g, out);
    } else {
% for j in range(count - 1):
        if (first + ${j} < n) out[first + ${j}] = v${j};
% endfor
    }
</%def>\
__kernel void ${name}(
    __global ${OUT} *out, const ulong n, const uint k0, const uint k1, const uint s0,
    const uint s1, const ulong pos
% if kind == 'float':
    , const int mode, const ${C} a, const ${C} b
% elif kind == 'int':
    , const ulong low, const ulong range, const ulong thresh, const int wide
% else:
    , __global const ${T} *cdf, const long m, const ${C} total
% endif
)
{
% if kind == 'float':
${prologue(lanes)}\
${uniforms()}\
    ${C} ${', '.join('v%d' % j for j in range(lanes))};
    if (mode == 1) {
        // Box-Muller: 1 - u is in (0, 1], so the log is finite.
% for j in range(0, lanes, 2):
        const ${F} r${j} = sqrt((${F})-2 * log((${F})1 - u${j}));
        v${j} = a + b * (r${j} * cospi((${F})2 * u${j + 1}));
        v${j + 1} = a + b * (r${j} * sinpi((${F})2 * u${j + 1}));
% endfor
    } else if (mode == 2) {
% for j in range(lanes):
        v${j} = a + b * ((${F})0 - log((${F})1 - u${j}));
% endfor
    } else {
% for j in range(lanes):
        v${j} = a + b * u${j};
% endfor
    }
${stores(lanes, T)}\
% elif kind == 'int':
    const ulong g = get_global_id(0);
    const ulong first = g * (wide ? 2 : 4);
    if (first >= n) return;
    const ulong blk = pos + g;
    const uint4 ctr = (uint4)((uint)blk, (uint)(blk >> 32), s0, s1);
    const uint4 w = ga_philox(ctr, (uint2)(k0, k1));
    if (wide) {
% for j in range(2):
        ulong x${j} = ((ulong)w.s${2 * j} << 32) | w.s${2 * j + 1};
        for (uint att = 1; x${j} * range < thresh; ++att) {
            const uint4 r = ga_philox(ctr, (uint2)(k0, k1 ^ (att * 0x9E3779B9u)));
            x${j} = ((ulong)r.s${2 * j} << 32) | r.s${2 * j + 1};
        }
        const ${T} v${j} = (${T})as_long(low + (range ? mul_hi(x${j}, range) : x${j}));
% endfor
${stores(2, T)}\
    } else {
% for j in range(4):
        ulong m${j} = (ulong)w.s${j} * range;
        for (uint att = 1; (uint)m${j} < (uint)thresh; ++att) {
            const uint4 r = ga_philox(ctr, (uint2)(k0, k1 ^ (att * 0x9E3779B9u)));
            m${j} = (ulong)r.s${j} * range;
        }
        const ${T} v${j} = (${T})as_long(low + (m${j} >> 32));
% endfor
${stores(4, T)}\
    }
% else:
${prologue(lanes)}\
${uniforms()}\
% for j in range(lanes):
    long v${j};
    {
        long lo = 0, hi = m;
        while (lo < hi) {
            const long mid = (lo + hi) >> 1;
            if (cdf[mid] / total > u${j}) hi = mid; else lo = mid + 1;
        }
        v${j} = min(lo, m - 1);
    }
% endfor
${stores(lanes, 'long')}\
% endif
}
