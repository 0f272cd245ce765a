## Advanced indexing: gather/scatter through integer index arrays, and boolean-mask
## compaction (per-group counts -> one scan over the groups -> a pass that writes), for every
## element size in one program: elements move as raw bits, so float32 and int32 share a kernel.
## Inputs:
##   index_t      'int' or 'long': sizes, strides and offsets, in elements
##   local_size   L, the work-group size of the mask kernels (a power of two)
##   sizes        ((itemsize, items), ...): the element sizes served and, for each, the
##                consecutive mask positions a work-item owns in a tile of L * items
##                (8 or 16); itemsize 8 also writes nonzero's coordinates
##   count_items  mask positions a work-item reads per step in ga_mask_count (8 or 16)
##   sequential   the mask pass that writes as ga_mask_seq (CPUs) rather than ga_mask_write
## Defines, for each itemsize s:
##   ga_take_<s>(items, run, dir, mode, data, data_off, dense, dense_off, idx, prm, flag)
##       for each element o of the result, dir 0: dense[o] = data[addr(o)], dir 1:
##       data[addr(o)] = dense[o], dir 2: only check the indices. A work-item per element
##       (run 1), or per `run` consecutive positions of the last dim (CPUs: index arithmetic
##       once per run; the last dim is then not an index dim, or K == 1). prm (index_t): R,
##       K, b0, nb; per result dim (size, data stride, dense stride); per index array (type
##       code, offset, axis size, data stride, axis, strides over the nb dims from b0). An
##       index out of range in mode 0 (raise) records (index, axis, size) in flag[1..3]
##       (flag[0] claimed by an atomic) and touches no data; mode 1 wraps, mode 2 clips.
##   ga_mask_write_<s>(n, chunk, dir, mask, mask_off, msize, mag, offsets, data, data_off, prm,
##       dense, dense_off, dense_step): work-group g walks mask positions [g * chunk, ...) a
##       tile at a time, starting at output offsets[g]. dir 0: dense[rank] = data[addr(p)],
##       staged in local memory so that reads and writes are coalesced; dir 1 (x[mask] = v):
##       data[addr(p)] = dense[rank * dense_step]; dir 2 (s == 8): the C-order coordinates
##       of p, coordinate d at dense[d * dense_step + rank]. prm: R, R sizes, R data strides.
##   ga_mask_seq_<s>(same arguments): the same, a work-item per chunk walking it in order,
##       no barriers (CPUs)
## and once:
##   ga_mask_count(n, chunk, mask, mask_off, msize, mag, counts): counts[g] = set flags of
##       chunk g; a flag is ((element bits) & mag) != 0 (mag clears float sign bits: -0.0 is
##       False) for elements of msize bytes at byte offset mask_off
##   ga_mask_scan(groups, counts): exclusive scan of counts[0..groups) in place (one work-group),
##       the total in counts[groups]
<%
    I = index_t
    S = 'const ' + index_t
    L = local_size
    TYPES = {1: 'uchar', 2: 'ushort', 4: 'uint', 8: 'ulong', 16: 'ulong2'}
    steps = [1 << j for j in range(L.bit_length() - 1)]
%>\
// local memory index, padded against bank conflicts of strided accesses (j: no side effects)
#define GA_PAD(j) ((j) + ((j) >> 5))

inline long ga_index(__global const char *p, const ${I} i, const int code)
{
    switch (code) {
    case 1: return p[i];
    case 2: return ((__global const uchar *)p)[i];
    case 3: return ((__global const short *)p)[i];
    case 4: return ((__global const ushort *)p)[i];
    case 5: return ((__global const int *)p)[i];
    case 6: return ((__global const uint *)p)[i];
    default: return ((__global const long *)p)[i];  // uint64 reinterpreted, as numpy does
    }
}

// index v of an axis of `size` resolved by mode (0 raise, 1 wrap, 2 clip); -1 when out of
// range in raise mode, after recording (v, axis, size) in flag[1..3] (flag[0]: an atomic claim)
long ga_resolve(long v, const long size, const int mode, __global long *flag, const long axis)
{
    if (mode == 1) {
        v %= size;
        return v < 0 ? v + size : v;
    }
    if (mode == 2)
        return clamp(v, 0L, size - 1);
    const long w = v < 0 ? v + size : v;
    if (w >= 0 && w < size)
        return w;
    if (atomic_cmpxchg((volatile __global int *)flag, 0, 1) == 0) {
        flag[1] = v;
        flag[2] = axis;
        flag[3] = size;
    }
    return -1;
}

inline uint ga_flag(__global const uchar *m, const ${I} i, const int msize, const ulong mag)
{
    switch (msize) {
    case 1: return m[i] != 0;
    case 2: return (((__global const ushort *)m)[i] & (ushort)mag) != 0;
    case 4: return (((__global const uint *)m)[i] & (uint)mag) != 0;
    case 8: return (((__global const ulong *)m)[i] & mag) != 0;
    default: {
        const ulong2 v = ((__global const ulong2 *)m)[i];
        return ((v.s0 | v.s1) & mag) != 0;
    }
    }
}

// the element offset of C-order position p of an array of prm[0] dims
inline ${I} ga_addr(__constant ${I} *prm, ${I} p, const ${I} off)
{
    const int R = (int)prm[0];
    if (R == 1)
        return off + p * prm[2];
    ${I} at = off;
    for (int d = R - 1; d >= 0; --d) {
        ${I} c = p;
        if (d) {
            c = p % prm[1 + d];
            p /= prm[1 + d];
        }
        at += c * prm[1 + R + d];
    }
    return at;
}

## uint `var`: bit t set when the flag of position pos + t (< end) is set
<%def name="load_bits(var, N, pad)">\
${pad}uint ${var} = 0;
${pad}if (msize == 1 && pos + ${N} <= end) {
${pad}    __global const uchar *at = m + pos;
${pad}    const uchar${N} v = (((size_t)at) & ${N - 1}) == 0 ? *(__global const uchar${N} *)at
${pad}                                                   : vload${N}(0, at);
% for t in range(N):
${pad}    ${var} |= (uint)(v.s${'%x' % t} != 0) << ${t};
% endfor
${pad}} else {
${pad}    for (int t = 0; t < ${N}; ++t)
${pad}        if (pos + t < end)
${pad}            ${var} |= ga_flag(m, pos + t, msize, mag) << t;
${pad}}
</%def>\

__kernel void ga_mask_count(${S} n, ${S} chunk, __global const uchar *mask, ${S} mask_off,
                            const int msize, const ulong mag, __global ${I} *counts)
{
    __local ${I} part[${L}];
    const int l = (int)get_local_id(0);
    const ${I} g = (${I})get_group_id(0);
    __global const uchar *m = mask + mask_off;
    const ${I} begin = g * chunk, end = min(begin + chunk, n);
    ${I} c = 0;
    for (${I} pos = begin + (${I})l * ${count_items}; pos < end; pos += ${L * count_items}) {
${load_bits('bits', count_items, '        ')}\
        c += popcount(bits);
    }
    part[l] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
% for s in reversed(steps):
    if (l < ${s})
        part[l] += part[l + ${s}];
    barrier(CLK_LOCAL_MEM_FENCE);
% endfor
    if (l == 0)
        counts[g] = part[0];
}

## Exclusive scan over the work-group of the int `cnt`: `excl` and the group's `total`.
<%def name="group_scan(pad)">\
${pad}part[l] = cnt;
${pad}barrier(CLK_LOCAL_MEM_FENCE);
% for s in steps:
${pad}{
${pad}    const ${I} v = l >= ${s} ? part[l - ${s}] : 0;
${pad}    barrier(CLK_LOCAL_MEM_FENCE);
${pad}    part[l] += v;
${pad}    barrier(CLK_LOCAL_MEM_FENCE);
${pad}}
% endfor
${pad}const ${I} excl = part[l] - cnt, total = part[${L - 1}];
${pad}barrier(CLK_LOCAL_MEM_FENCE);
</%def>\

__kernel void ga_mask_scan(${S} groups, __global ${I} *counts)
{
    __local ${I} part[${L}];
    const int l = (int)get_local_id(0);
    ${I} carry = 0;
    for (${I} base = 0; base < groups; base += ${L}) {
        const ${I} cnt = base + l < groups ? counts[base + l] : 0;
${group_scan('        ')}\
        if (base + l < groups)
            counts[base + l] = carry + excl;
        carry += total;
    }
    if (l == 0)
        counts[groups] = carry;
}

% for s, N in sizes:
<% T = TYPES[s]; TILE = L * N %>\
__kernel void ga_take_${s}(${S} items, ${S} run, const int dir, const int mode,
                          __global ${T} *data, ${S} data_off,
                          __global ${T} *dense, ${S} dense_off,
                          __global const char *idx, __constant ${I} *prm,
                          __global long *flag)
{
    const ${I} o = (${I})get_global_id(0);
    if (o >= items)
        return;
    const int R = (int)prm[0], K = (int)prm[1], b0 = (int)prm[2], nb = (int)prm[3];
    ${I} rem = o, at = data_off, dn = dense_off, bflat = 0, bmul = 1, len = 1, ds = 0, dns = 0;
    int walked = R, index_runs = 0;
    if (run > 1) {  // this work-item's run of the last dim: [c0, c0 + len)
        __constant ${I} *p = prm + 4 + 3 * (R - 1);
        const ${I} chunks = (p[0] + run - 1) / run, c0 = rem % chunks * run;
        rem /= chunks;
        len = min(run, p[0] - c0);
        ds = p[1];
        dns = p[2];
        at += c0 * ds;
        dn += c0 * dns;
        walked = R - 1;
        index_runs = nb && b0 + nb == R;  // the last dim is an index dim (then K == 1)
        if (index_runs) {
            bflat = c0;
            bmul = p[0];
        }
    }
    for (int d = walked - 1; d >= 0; --d) {
        __constant ${I} *p = prm + 4 + 3 * d;
        ${I} c = rem;
        if (d) {
            c = rem % p[0];
            rem /= p[0];
        }
        at += c * p[1];
        dn += c * p[2];
        if (d >= b0 && d < b0 + nb) {
            bflat += c * bmul;
            bmul *= p[0];
        }
    }
    ${I} ioff = 0;
    for (int k = 0; k < K; ++k) {
        __constant ${I} *q = prm + 4 + 3 * R + k * (5 + nb);
        ${I} r = bflat;
        ioff = q[1];
        for (int j = nb - 1; j >= 0; --j) {
            ${I} c = r;
            if (j) {
                const ${I} size = prm[4 + 3 * (b0 + j)];
                c = r % size;
                r /= size;
            }
            ioff += c * q[5 + j];
        }
        if (index_runs)
            break;
        const long v = ga_resolve(ga_index(idx, ioff, (int)q[0]), q[2], mode, flag, q[4]);
        if (v < 0)
            return;  // no access with an index out of range
        at += (${I})v * q[3];
    }
    if (index_runs) {  // the index walks the run
        __constant ${I} *q = prm + 4 + 3 * R;
        const ${I} step = q[4 + nb];
        if (q[0] == 7 && mode == 0 && dir == 0) {  // the common gather, unswitched
            __global const long *ix = (__global const long *)idx;
            const long size = q[2];
            const ${I} stride = q[3];
            for (${I} t = 0; t < len; ++t, ioff += step, at += ds, dn += dns) {
                const long v = ix[ioff], w = v < 0 ? v + size : v;
                if ((ulong)w >= (ulong)size) {
                    ga_resolve(v, size, 0, flag, q[4]);
                    return;
                }
                dense[dn] = data[at + (${I})w * stride];
            }
            return;
        }
        for (${I} t = 0; t < len; ++t, ioff += step, at += ds, dn += dns) {
            const long v = ga_resolve(ga_index(idx, ioff, (int)q[0]), q[2], mode, flag, q[4]);
            if (v < 0)
                return;
            const ${I} a = at + (${I})v * q[3];
            if (dir == 0)
                dense[dn] = data[a];
            else if (dir == 1)
                data[a] = dense[dn];
        }
        return;
    }
    for (${I} t = 0; t < len; ++t, at += ds, dn += dns) {
        if (dir == 0)
            dense[dn] = data[at];
        else if (dir == 1)
            data[at] = dense[dn];
    }
}

% if not sequential:
__kernel void ga_mask_write_${s}(${S} n, ${S} chunk, const int dir,
                                __global const uchar *mask, ${S} mask_off,
                                const int msize, const ulong mag,
                                __global const ${I} *offsets,
                                __global ${T} *data, ${S} data_off, __constant ${I} *prm,
                                __global ${T} *dense, ${S} dense_off, ${S} dense_step)
{
    __local ${T} buf[GA_PAD(${TILE})];
    __local ${I} part[${L}];
    const int l = (int)get_local_id(0);
    const ${I} g = (${I})get_group_id(0);
    __global const uchar *m = mask + mask_off;
    const ${I} begin = g * chunk, end = min(begin + chunk, n);
    ${I} running = offsets[g];
    for (${I} tile = begin; tile < end; tile += ${TILE}) {
        const ${I} pos = tile + (${I})l * ${N};
${load_bits('bits', N, '        ')}\
        const ${I} cnt = popcount(bits);
${group_scan('        ')}\
        ${I} k = excl;
        if (dir == 1) {
            for (int t = 0; t < ${N}; ++t)
                if ((bits >> t) & 1)
                    data[ga_addr(prm, pos + t, data_off)] =
                        dense[dense_off + (running + k++) * dense_step];
        } else if (dir == 0) {
            // stage the tile (coalesced), pick this work-item's elements, compact them in
            // local memory, write the tile's run (coalesced)
% for j in range(N):
            if (tile + ${j * L} + l < end)
                buf[GA_PAD(${j * L} + l)] = data[ga_addr(prm, tile + ${j * L} + l, data_off)];
% endfor
            barrier(CLK_LOCAL_MEM_FENCE);
% for t in range(N):
            const ${T} v${t} = buf[GA_PAD(l * ${N} + ${t})];
% endfor
            barrier(CLK_LOCAL_MEM_FENCE);
% for t in range(N):
            if ((bits >> ${t}) & 1) {
                buf[GA_PAD(k)] = v${t};
                ++k;
            }
% endfor
            barrier(CLK_LOCAL_MEM_FENCE);
% for j in range(N):
            if (${j * L} + l < total)
                dense[dense_off + running + ${j * L} + l] = buf[GA_PAD(${j * L} + l)];
% endfor
            barrier(CLK_LOCAL_MEM_FENCE);
        }
% if s == 8:
        else {
            for (int t = 0; t < ${N}; ++t)
                if ((bits >> t) & 1) {
                    buf[GA_PAD(k)] = (ulong)(pos + t);
                    ++k;
                }
            barrier(CLK_LOCAL_MEM_FENCE);
            const int R = (int)prm[0];
            for (${I} e = l; e < total; e += ${L}) {
                ${I} f = (${I})buf[GA_PAD(e)];
                for (int d = R - 1; d >= 0; --d) {
                    ${I} c = f;
                    if (d) {
                        c = f % prm[1 + d];
                        f /= prm[1 + d];
                    }
                    dense[dense_off + d * dense_step + running + e] = (ulong)(long)c;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
% endif
        running += total;
    }
}
% else:

__kernel void ga_mask_seq_${s}(${S} n, ${S} chunk, const int dir,
                              __global const uchar *mask, ${S} mask_off,
                              const int msize, const ulong mag,
                              __global const ${I} *offsets,
                              __global ${T} *data, ${S} data_off, __constant ${I} *prm,
                              __global ${T} *dense, ${S} dense_off, ${S} dense_step)
{
    const ${I} g = (${I})get_global_id(0);
    __global const uchar *m = mask + mask_off;
    const ${I} begin = g * chunk, end = min(begin + chunk, n);
    ${I} r = offsets[g];
    for (${I} pos = begin; pos < end; pos += 16) {
${load_bits('bits', 16, '        ')}\
        for (; bits; bits &= bits - 1, ++r) {
            const ${I} p = pos + (31 - clz(bits & (0u - bits)));
            if (dir == 0) {
                dense[dense_off + r] = data[ga_addr(prm, p, data_off)];
            } else if (dir == 1) {
                data[ga_addr(prm, p, data_off)] = dense[dense_off + r * dense_step];
            }
% if s == 8:
            else {
                ${I} f = p;
                for (int d = (int)prm[0] - 1; d >= 0; --d) {
                    ${I} c = f;
                    if (d) {
                        c = f % prm[1 + d];
                        f /= prm[1 + d];
                    }
                    dense[dense_off + d * dense_step + r] = (ulong)(long)c;
                }
            }
% endif
        }
    }
}
% endif

% endfor
