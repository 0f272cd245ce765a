## The FFT kernels of one precision (gpuarr/fft.py): Stockham auto-sort radix passes, the
## real-transform pre/post passes, and a pointwise pass (Bluestein's chirps and products).
## Inputs:
##   real      'float' (complex64) or 'double' (complex128)
##   radices   the radices R to define fft_radix<R> for (1 is a strided copy)
##   nmax      the elements fft_rows holds per work-group (two buffers of them fit in
##             local memory)
##   rows_pow2 True: the program is fft_rows_pow2 alone (GPUs: fft_rows for lengths of
##             radices 2, 4, 8 and 16, buffers padded by one element in 16); False: the rest
##   scalar_radix  True: fft_radix<R> asks Intel's CPU compiler (cl_intel_vec_len_hint) not to
##             run work-items in vector lanes: each work-item's R loads lie n elements
##             apart, so the lanes' loads become gathers (2^20 complex64: 36 -> 21 ms)
##   block     None, or the program is fft_block alone, a kernel built for one row length:
##             the (name, value) pairs of n, radices, threads, group, in_swap, out_swap,
##             twist, vec_in, vec_out, pre, post (see block_kernel below)
## Every kernel takes the same arguments, so that one launcher serves them all:
##   x, y      input and output, as pointers to real numbers; complex element t of row
##             (b1, b2) is re = x[xo + t*xs + b1*xb1 + b2*xb2], im = the next one at +xd
##             (a complex array: xs = 2 * stride, xd = 1; a real array read as pairs of
##             consecutive elements: xs = 2 * stride, xd = stride)
##   tab       complex table (twiddles, chirps, products), from entry toff
##   n, p      per kernel (below); cnt: work-items per row; nb1: rows along b1 (flattened
##             with the work-items, the faster of the two when swap); rcnt, rnb1: 1/cnt and
##             1/nb1 as floats (integer division by them, exact); rp likewise for p
##   lim       stores of elements t >= lim are dropped (rows shorter than the transform)
##   flags     1: conjugate what is loaded; 2: conjugate what is stored; 4: the input is
##             real (imaginary parts read as 0); 8: the output is real (imaginary parts
##             dropped); scale multiplies what is stored
## Dimension 1 of the launch runs over b2.
## Defines: fft_radix<R> (a pass of a length n*R transform: butterflies i of rows of
##   n; p the product of the earlier passes' radices), fft_r2c_post (X[k], k <= n, of a real
##   row of 2n from the complex transform of its pairs), fft_c2r_pre (its inverse's input:
##   the n pairs' spectrum from X[0..n], of which lim are given), fft_hermitian (a whole row
##   of n from its first lim = n//2+1 or fewer values), fft_pointwise (y[t] = x[t] *
##   tab[t] for t < n, 0 beyond), fft_rows (passes of rows of n in local memory, cnt =
##   2^swap rows b1 per work-group, cnt * n <= nmax: the radices are `code`, 4 bits each,
##   indices into `radices`, first pass lowest; with p > 1 they are the later passes of a
##   longer transform whose earlier passes multiply to p, on rows of the elements b1 mod p,
##   with twiddles from toff).
<%!
import math

def lit(v, real):
    return repr(float(v)) + ("f" if real == "float" else "")

def cmul_const(v, c, real):
    """v * c for a complex constant c, the exact cases without multiplies."""
    cr, ci = round(c.real, 17), round(c.imag, 17)
    if abs(cr - 1) < 1e-15 and abs(ci) < 1e-15:
        return v
    if abs(cr) < 1e-15 and abs(ci + 1) < 1e-15:
        return f"(({real}2)({v}.y, -{v}.x))"
    if abs(cr) < 1e-15 and abs(ci - 1) < 1e-15:
        return f"(({real}2)(-{v}.y, {v}.x))"
    if abs(cr + 1) < 1e-15 and abs(ci) < 1e-15:
        return f"(-{v})"
    return (f"(({real}2)({v}.x * {lit(cr, real)} - {v}.y * {lit(ci, real)}, "
            f"{v}.x * {lit(ci, real)} + {v}.y * {lit(cr, real)}))")

def dft(R, names, real, lines, fresh):
    """Lines computing the forward DFT of the variables `names`; returns the output names."""
    if R == 1:
        return list(names)
    f = next(f for f in range(2, R + 1) if R % f == 0)
    if f < R:  # R = f * m: f transforms of m (decimation in time), twiddled, m of f
        m = R // f
        subs = [dft(m, names[r::f], real, lines, fresh) for r in range(f)]
        out = [None] * R
        for k in range(m):
            ts = []
            for r in range(f):
                w = complex(math.cos(2 * math.pi * r * k / R), -math.sin(2 * math.pi * r * k / R))
                ts.append(fresh())
                lines.append(f"const {real}2 {ts[-1]} = {cmul_const(subs[r][k], w, real)};")
            for q, y in enumerate(dft(f, ts, real, lines, fresh)):
                out[k + m * q] = y
        return out
    if R == 2:
        a, b = fresh(), fresh()
        lines.append(f"const {real}2 {a} = {names[0]} + {names[1]};")
        lines.append(f"const {real}2 {b} = {names[0]} - {names[1]};")
        return [a, b]
    h = (R - 1) // 2
    s = [None] + [fresh() for _ in range(h)]
    d = [None] + [fresh() for _ in range(h)]
    for j in range(1, h + 1):
        lines.append(f"const {real}2 {s[j]} = {names[j]} + {names[R - j]};")
        lines.append(f"const {real}2 {d[j]} = {names[j]} - {names[R - j]};")
    out = [None] * R
    out[0] = fresh()
    lines.append(f"const {real}2 {out[0]} = {names[0]} + " + " + ".join(s[1:]) + ";")
    for k in range(1, h + 1):
        a, b = fresh(), fresh()
        ca = " + ".join(f"{s[j]} * {lit(math.cos(2 * math.pi * j * k / R), real)}"
                        for j in range(1, h + 1))
        cb = " + ".join(f"{d[j]} * {lit(math.sin(2 * math.pi * j * k / R), real)}"
                        for j in range(1, h + 1))
        lines.append(f"const {real}2 {a} = {names[0]} + {ca};")
        lines.append(f"const {real}2 {b} = {cb};")
        y1, y2 = fresh(), fresh()
        lines.append(f"const {real}2 {y1} = {a} + (({real}2)({b}.y, -{b}.x));")
        lines.append(f"const {real}2 {y2} = {a} + (({real}2)(-{b}.y, {b}.x));")
        out[k], out[R - k] = y1, y2
    return out

def butterfly(R, real):
    """(lines, output names) of the DFT of u0 .. u<R-1>."""
    lines, count = [], [0]
    def fresh():
        count[0] += 1
        return f"v{count[0]}"
    outs = dft(R, [f"u{j}" for j in range(R)], real, lines, fresh)
    return lines, outs
%>\
<%
    T = real
    T2 = real + "2"
%>\
% if real == "double":
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif

#define FFT_ARGS __global const ${T} *x, __global ${T} *y, __global const ${T2} *tab, \
    const uint n, const uint p, const uint toff, const uint cnt, const uint nb1, \
    const uint swap, const float rcnt, const float rnb1, const float rp, \
    const long xo, const long xs, const long xd, const long xb1, const long xb2, \
    const long yo, const long ys, const long yd, const long yb1, const long yb2, \
    const uint lim, const uint flags, const ${T} scale

// q = a / d for a < 2^31 (rd = 1/d as a float): a float estimate, refined once from the
// exact remainder, then corrected by one (all of it vectorises; integer division does not).
inline uint fft_div(uint a, uint d, float rd)
{
    uint q = (uint)((float)a * rd);
    int r = (int)(a - q * d);
    q = (uint)((int)q + (int)((float)r * rd));
    r = (int)(a - q * d);
    q = r < 0 ? q - 1 : (r >= (int)d ? q + 1 : q);
    return q;
}

inline ${T2} fft_cmul(${T2} a, ${T2} b)
{
    return (${T2})(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

inline ${T2} fft_load(__global const ${T} *x, long a, long d, uint flags)
{
    ${T2} v = (${T2})(x[a], (flags & 4u) ? (${T})0 : x[a + d]);
    if (flags & 1u)
        v.y = -v.y;
    return v;
}

inline void fft_store(__global ${T} *y, long a, long d, uint flags, ${T} scale, ${T2} v)
{
    v *= scale;
    y[a] = v.x;
    if (!(flags & 8u))
        y[a + d] = (flags & 2u) ? -v.y : v.y;
}

// The work-item's element (i) of its row, and the row's first element in x and y.
#define FFT_IDS \
    const uint g = get_global_id(0); \
    if (g >= cnt * nb1) \
        return; \
    const uint q_ = fft_div(g, swap ? nb1 : cnt, swap ? rnb1 : rcnt); \
    const uint r_ = g - q_ * (swap ? nb1 : cnt); \
    const uint i = swap ? q_ : r_; \
    const uint b1 = swap ? r_ : q_; \
    const long bx = xo + (long)b1 * xb1 + (long)get_global_id(1) * xb2; \
    const long by = yo + (long)b1 * yb1 + (long)get_global_id(1) * yb2;
% if not rows_pow2 and not block:
% for R in radices:
<% lines, outs = butterfly(R, T) %>
// One pass of radix ${R}: u[j] = x[i + j*n] times the twiddles exp(-2 pi i j k / (p R)),
// k = i mod p (tab[toff + k*(R-1) + j-1]), its DFT to y[(i - k)*R + k + j*p].
__kernel ${'__attribute__((intel_vec_len_hint(1)))' if scalar_radix else ''}\
void fft_radix${R}(FFT_ARGS)
{
    FFT_IDS
% for j in range(R):
    ${T2} u${j} = fft_load(x, bx + (long)(i + ${j}u * n) * xs, xd, flags);
% endfor
% if R > 1:
    const uint k = i - fft_div(i, p, rp) * p;
    if (p > 1u) {
        __global const ${T2} *w = tab + toff + (long)k * ${R - 1};
% for j in range(1, R):
        u${j} = fft_cmul(u${j}, w[${j - 1}]);
% endfor
    }
% else:
    const uint k = 0;
% endif
% for line in lines:
    ${line}
% endfor
    const uint o = (i - k) * ${R}u + k;
% for j in range(R):
    if (o + ${j}u * p < lim)
        fft_store(y, by + (long)(o + ${j}u * p) * ys, yd, flags, scale, ${outs[j]});
% endfor
}
% endfor
% endif

<%def name="rows_kernel(name, pow2)">\
<%
    # pow2: the GPU variant for lengths of 2, 4, 8 and 16 alone: fewer radices (fewer
    # registers for the largest butterfly, more work-groups resident), k = i mod pp by a mask,
    # and local indices padded by one element in 16 (the first pass's stores at stride R,
    # and R * cnt, fall in distinct banks)
    T, T2 = real, real + "2"
    size = nmax + nmax // 16 if pow2 else nmax
    IX = (lambda e: f"FFT_PAD({e})") if pow2 else (lambda e: e)
%>\
__kernel void ${name}(FFT_ARGS, const ulong code, const uint npass)
{
    __local ${T2} buf_a[${size}], buf_b[${size}];
    const uint lid = get_local_id(0), wg = get_local_size(0), lc = swap, cm = cnt - 1u;
    const uint row0 = get_group_id(0) * cnt;
    const long bx = xo + (long)row0 * xb1 + (long)get_global_id(1) * xb2;
    const long by = yo + (long)row0 * yb1 + (long)get_global_id(1) * yb2;
    for (uint u = lid; u < (n << lc); u += wg) {
        const uint c = u & cm;
        buf_a[${IX("u")}] = row0 + c < nb1 ? fft_load(x, bx + (long)c * xb1 + (long)(u >> lc) * xs, xd,
                                             flags) : (${T2})(0, 0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __local ${T2} *src = buf_a, *dst = buf_b;
    uint pp = 1, off = toff;
    for (uint s = 0; s < npass; s++) {
        const uint which = (uint)(code >> (4 * s)) & 15u;
        uint r = 1;
% for idx, R in enumerate(radices):
% if R > 1 and (not pow2 or R in (2, 4, 8, 16)):
<% lines, outs = butterfly(R, T) %>\
        if (which == ${idx}u) {
            r = ${R};
            const uint m = n / ${R}u;
% if not pow2:
            const float rpp = 1.0f / (float)pp;
% endif
            for (uint u = lid; u < (m << lc); u += wg) {
                const uint c = u & cm, i = u >> lc;
% for j in range(R):
                ${T2} u${j} = src[${IX(f"((i + {j}u * m) << lc) + c")}];
% endfor
% if pow2:
                const uint k = i & (pp - 1u);
% else:
                const uint k = i - fft_div(i, pp, rpp) * pp;
% endif
                if (pp * p > 1u) {
                    // k1 + p k: the butterfly's k in the whole transform (row k1 mod p)
                    const uint kk = (p > 1u ? row0 + c : 0u) + p * k;
                    __global const ${T2} *w = tab + off + (long)kk * ${R - 1};
% for j in range(1, R):
                    u${j} = fft_cmul(u${j}, w[${j - 1}]);
% endfor
                }
% for line in lines:
                ${line}
% endfor
                const uint o = (i - k) * ${R}u + k;
% for j in range(R):
                dst[${IX(f"((o + {j}u * pp) << lc) + c")}] = ${outs[j]};
% endfor
            }
        }
% endif
% endfor
        barrier(CLK_LOCAL_MEM_FENCE);
        __local ${T2} *swapped = src;
        src = dst;
        dst = swapped;
        if (pp * p > 1u)
            off += pp * p * (r - 1);
        pp *= r;
    }
    const uint last = min(n, lim);
    for (uint u = lid; u < (last << lc); u += wg) {
        const uint c = u & cm;
        if (row0 + c < nb1)
            fft_store(y, by + (long)c * yb1 + (long)(u >> lc) * ys, yd, flags, scale, src[${IX("u")}]);
    }
}
</%def>\
#define FFT_PAD(t) ((t) + ((t) >> 4))

<%def name="block_kernel()">\
<%
    T, T2 = real, real + "2"
    spec = dict(block)
    B, rads, G, TH = spec["n"], spec["radices"], spec["group"], spec["threads"]
    WG = TH * G
    last = len(rads) - 1
    size = G * B + (G * B) // 16 + 1
    def at(pos, c):
        """The local index of element `pos` of row `c`: rows interleaved where a side of the
        kernel runs across them, else one after the other (no bank conflicts either way)."""
        if G > 1 and not (spec["in_swap"] or spec["out_swap"]):
            return f"FFT_PAD({c} * {B}u + {pos})"
        return f"FFT_PAD(({pos}) * {G}u + {c})"
    # pass s's twiddles exp(-2 pi i j k / (p R)) at tab[toffs[s] + (j - 1) p + k]
    toffs, t = [], 0
    for s_, R_ in enumerate(rads):
        toffs.append(t)
        p_ = math.prod(rads[:s_])
        t += (R_ - 1) * p_ if p_ > 1 else 0
    def load(addr):
        if spec["vec_in"]:
            return f"fft_vload(x, {addr}, flags)"
        return f"fft_load(x, {addr}, xd, flags)"
    def row(mode, q):
        """The index of the work-item's row in a table multiply's index (mode 1: none)."""
        return {1: "0u", 2: f"(row0 + c{q})", 3: "(uint)get_global_id(1)"}[mode]
    def store(addr, v):
        if spec["vec_out"]:
            return f"fft_vstore(y, {addr}, flags, scale, {v});"
        return f"fft_store(y, {addr}, yd, flags, scale, {v});"
%>\
// One row length (${B} = ${" x ".join(map(str, rads))}) whole in local memory, ${G} row(s) per
// work-group of ${WG}: every work-item holds its butterflies' values in registers across a
// barrier, so the passes share one buffer (element t of row c at ${at("t", "c")}). The
// first pass reads from global memory and the last writes there (work-items along the rows
// where they are interleaved in memory: in_swap / out_swap). With twist, element t of row
// r is first multiplied by exp(-2 pi i t r / M), r = b1 (twist 1) or b2 (twist 2): the
// four-step twiddle; twt holds exp(-2 pi i l / M) for l < 2^lbits, then exp(-2 pi i h
// 2^lbits / M). tab: each pass's twiddles, j-major (adjacent work-items, adjacent k). Dimensions 1 and 2 run over b2
// and b3; rows: b1's count. With pre, element t is loaded only where e = r + t pre_stride <
// pre_lim, times mtab[pre_off + e]; with post, element k is stored only where e = r + k
// post_stride < lim, conjugated first if flags & 16, times mtab[post_off + e] (r: the
// row's index along dimension 0 or 1, or 0): Bluestein's pointwise products, folded in.
inline ${T2} fft_vload(__global const ${T} *x, long a, uint flags)
{
    ${T2} v = *(__global const ${T2} *)(x + a);
    if (flags & 1u)
        v.y = -v.y;
    return v;
}

inline void fft_vstore(__global ${T} *y, long a, uint flags, ${T} scale, ${T2} v)
{
    v *= scale;
    if (flags & 2u)
        v.y = -v.y;
    *(__global ${T2} *)(y + a) = v;
}

__kernel __attribute__((reqd_work_group_size(${WG}, 1, 1)))
void fft_block(__global const ${T} *x, __global ${T} *y, __global const ${T2} *tab,
               __global const ${T2} *twt, __global const ${T2} *mtab, const uint rows,
               const uint lbits, const uint pre_off, const uint pre_stride,
               const uint pre_lim, const uint post_off, const uint post_stride,
               const long xo, const long xs, const long xd, const long xb1, const long xb2,
               const long xb3, const long yo, const long ys, const long yd, const long yb1,
               const long yb2, const long yb3, const uint lim, const uint flags,
               const ${T} scale)
{
    __local ${T2} buf[${size}];
    const uint lid = get_local_id(0);
    const uint row0 = get_group_id(0) * ${G}u;
    const long bx = xo + (long)row0 * xb1 + (long)get_global_id(1) * xb2
                    + (long)get_global_id(2) * xb3;
    const long by = yo + (long)row0 * yb1 + (long)get_global_id(1) * yb2
                    + (long)get_global_id(2) * yb3;
% for s, R in enumerate(rads):
<%
    p = math.prod(rads[:s])
    m = B // R
    nb = -(-(G * m) // WG)
    exact = G * m % WG == 0
    swap = spec["in_swap"] if s < last else spec["out_swap"]
    lines, outs = butterfly(R, T)
%>\
    {   // pass ${s}: radix ${R}, p = ${p}
% for q in range(nb):
        const uint f${q} = lid + ${q * WG}u;
## (beyond G * m, the last butterfly again: its loads stay in bounds, its stores are dropped)
% if swap:
        const uint c${q} = f${q} % ${G}u, i${q} = ${f"f{q} / {G}u" if exact else f"min(f{q} / {G}u, {m - 1}u)"};
% else:
        const uint i${q} = f${q} % ${m}u, c${q} = ${f"f{q} / {m}u" if exact else f"min(f{q} / {m}u, {G - 1}u)"};
% endif
        const bool ok${q} = ${"true" if exact else f"f{q} < {G * m}u"}${" && row0 + c" + str(q) + " < rows" if s in (0, last) else ""};
% for j in range(R):
% if s == 0 and spec["pre"]:
        const uint e${q}_${j} = ${row(spec["pre"], q)} + (i${q} + ${j * m}u) * pre_stride;
        ${T2} a${q}_${j} = ok${q} && e${q}_${j} < pre_lim ? fft_cmul(${load(f"bx + (long)c{q} * xb1 + (long)(i{q} + {j * m}u) * xs")}, mtab[pre_off + e${q}_${j}]) : (${T2})(0, 0);
% elif s == 0:
        ${T2} a${q}_${j} = ok${q} ? ${load(f"bx + (long)c{q} * xb1 + (long)(i{q} + {j * m}u) * xs")} : (${T2})(0, 0);
% else:
        ${T2} a${q}_${j} = buf[${at(f"i{q} + {j * m}u", f"c{q}")}];
% endif
% endfor
% endfor
% if s > 0 and s < last:
        barrier(CLK_LOCAL_MEM_FENCE);
% endif
% for q in range(nb):
        {
% for j in range(R):
            ${T2} u${j} = a${q}_${j};
% endfor
% if s == 0 and spec["twist"]:
% for j in range(R):
            {
                const uint e = (i${q} + ${j * m}u) * ${"(row0 + c%d)" % q if spec["twist"] == 1 else "(uint)get_global_id(1)"};
                u${j} = fft_cmul(u${j}, fft_cmul(twt[e & ((1u << lbits) - 1u)],
                                               twt[(1u << lbits) + (e >> lbits)]));
            }
% endfor
% endif
% if p > 1:
            const uint k = i${q} % ${p}u;
% for j in range(1, R):
            u${j} = fft_cmul(u${j}, tab[${toffs[s] + (j - 1) * p}u + k]);
% endfor
% else:
            const uint k = 0;
% endif
% for line in lines:
            ${line}
% endfor
% if s < last:
            const uint o = (i${q} - k) * ${R}u + k;
% for j in range(R):
            if (ok${q})
                buf[${at(f"o + {j * p}u", f"c{q}")}] = ${outs[j]};
% endfor
% elif spec["post"]:
% for j in range(R):
            {
                const uint e = ${row(spec["post"], q)} + (i${q} + ${j * m}u) * post_stride;
                ${T2} v = ${outs[j]};
                if (flags & 16u)
                    v.y = -v.y;
                if (ok${q} && e < lim)
                    ${store(f"by + (long)c{q} * yb1 + (long)(i{q} + {j * m}u) * ys", "fft_cmul(v, mtab[post_off + e])")}
            }
% endfor
% else:
% for j in range(R):
            if (ok${q} && i${q} + ${j * m}u < lim)
                ${store(f"by + (long)c{q} * yb1 + (long)(i{q} + {j * m}u) * ys", outs[j])}
% endfor
% endif
        }
% endfor
% if s < last:
        barrier(CLK_LOCAL_MEM_FENCE);
% endif
    }
% endfor
}
</%def>\

% if block:
${block_kernel()}
% elif rows_pow2:
// Lengths of radices 2, 4, 8 and 16 alone (GPUs; a program of its own: some
// implementations count the local memory of every kernel of a program together).
${rows_kernel("fft_rows_pow2", True)}
% else:
// Passes of `cnt` = 2^swap rows at once in local memory, interleaved (element t of row c
// at t * cnt + c, so that adjacent rows load together), ping-ponging between two buffers.
${rows_kernel("fft_rows", False)}
// X[k] = (Z[k] + conj Z[n-k]) / 2 - i/2 W^k (Z[k] - conj Z[n-k]), W = exp(-2 pi i / 2n)
// (tab[toff + k]), for k = 0..n: Z is the transform of the real row's pairs.
__kernel void fft_r2c_post(FFT_ARGS)
{
    FFT_IDS
    const ${T2} a = fft_load(x, bx + (long)(i == n ? 0 : i) * xs, xd, flags);
    ${T2} b = fft_load(x, bx + (long)(i == 0 ? 0 : n - i) * xs, xd, flags);
    b.y = -b.y;
    const ${T2} c = fft_cmul(tab[toff + i], a - b);
    fft_store(y, by + (long)i * ys, yd, flags, scale,
              (${T})0.5 * (a + b + (${T2})(c.y, -c.x)));
}

// Z[k] = X[k] + conj X[n-k] + i conj(W^k) (X[k] - conj X[n-k]) for k < n from X[0..n]
// (lim of them given, the rest 0; the imaginary parts of X[0] and X[n] ignored): the
// inverse transform of Z holds the real row's pairs.
__kernel void fft_c2r_pre(FFT_ARGS)
{
    FFT_IDS
    const uint j = n - i;
    ${T2} a = i < lim ? fft_load(x, bx + (long)i * xs, xd, flags) : (${T2})(0, 0);
    ${T2} b = j < lim ? fft_load(x, bx + (long)j * xs, xd, flags) : (${T2})(0, 0);
    if (i == 0)
        a.y = 0;
    b.y = j == n ? 0 : -b.y;
    ${T2} w = tab[toff + i];
    w.y = -w.y;
    const ${T2} c = fft_cmul(w, a - b);
    fft_store(y, by + (long)i * ys, yd, 0u, scale, a + b + (${T2})(-c.y, c.x));
}

// A whole row of n from its first values (lim of them given, 0 beyond): X[n-k] = conj X[k].
__kernel void fft_hermitian(FFT_ARGS)
{
    FFT_IDS
    const uint j = i <= n / 2 ? i : n - i;
    ${T2} v = j < lim ? fft_load(x, bx + (long)j * xs, xd, flags) : (${T2})(0, 0);
    if (j != i)
        v.y = -v.y;
    fft_store(y, by + (long)i * ys, yd, 0u, scale, v);
}

// y[t] = x[t] * tab[toff + t] for t < n, 0 beyond.
__kernel void fft_pointwise(FFT_ARGS)
{
    FFT_IDS
    const ${T2} v = i < n ? fft_cmul(fft_load(x, bx + (long)i * xs, xd, flags), tab[toff + i])
                          : (${T2})(0, 0);
    if (i < lim)
        fft_store(y, by + (long)i * ys, yd, flags, scale, v);
}
% endif
