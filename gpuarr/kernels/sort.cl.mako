## Sorting and searching on the raw bits of one element width (gpuarr/sorting.py): a stable
## LSD radix sort whose passes turn the raw bits into order-preserving unsigned keys on the
## fly (nothing is transformed in memory, so sorted values keep their exact bits), a binary
## search, and the steps of unique.
## Inputs:
##   width        bits of a raw element: 8, 16, 32, 64, or 128 (complex128 only)
##   tile_local   work-items of the tile kernels (GPUs), a power of two >= 16
##   tile_items   elements per work-item of the tile kernels
##   rows_local   work-items of sort_rows; rows_max: the longest row it takes (power of two)
##   scan_local   the most work-items sort_scan runs with (a power of two)
## Runtime arguments shared by the kernels:
##   mode      0 unsigned (bool too), 1 signed, 2 IEEE float, 3 complex (64: complex64, 128:
##             complex128); keys follow numpy's order: NaNs last (all NaNs one key), -0.0 ==
##             +0.0, complex lexicographic in numpy's groups [R+Rj, R+nanj, nan+Rj, nan+nanj]
##   pay_mode  payload (an element's original flat index, uint): 0 none, 1 read from pin,
##             2 the index itself (a first pass)
##   src       what a pass sorts by: 0 the key's digit at `shift`; 1 the digit at `shift` of
##             the payload's row, payload / seg_n (sorting rows of seg_n elements)
## Defines: sort_diffbits (OR over all keys of key ^ first key: the bits that vary),
##   sort_hist_serial / sort_scatter_serial (a work-item per chunk, 8-bit digits, counts of
##   [digit][chunk]), sort_hist_tile / sort_scatter_tile (a work-group per tile of
##   tile_local * tile_items elements, 4-bit digits, ranks in local memory), sort_scan (one
##   work-group: exclusive scan of the counts in place), sort_rows (short rows whole in
##   local memory, a work-group each), sort_index (payload -> int64 position in its row),
##   sort_search (searchsorted, a work-item per query), unique_flags, unique_scatter,
##   unique_counts.
<%
    RAW = {8: 'uchar', 16: 'ushort', 32: 'uint', 64: 'ulong', 128: 'ulong2'}[width]
    KEY = {8: 'uint', 16: 'uint', 32: 'uint', 64: 'ulong', 128: 'ulong2'}[width]
    WORDS = {8: 1, 16: 1, 32: 1, 64: 2, 128: 4}[width]
    L = tile_local
    E = tile_items
    T = L * E
    ROWS_LOCAL = rows_local
    ROWS_MAX = rows_max
    SB, TB = 8, 4
    SR, TR = 1 << SB, 1 << TB
    ZERO = '(ulong2)(0, 0)' if width == 128 else '0'
    KEY_MAX = {8: '0xffffffffu', 16: '0xffffffffu', 32: '0xffffffffu', 64: '0xffffffffffffffffUL',
               128: '(ulong2)(~0UL, ~0UL)'}[width]
    # vector loads of a work-item's consecutive elements in the tile kernels
    VEC = E in (2, 4, 8, 16) and width <= 64
%>\
#define GA_PAD(j) ((j) + ((j) >> 5))

// ---- order-preserving keys: a < b in numpy's order <=> key(a) < key(b) as unsigned
inline uint ga_f16key(uint b)
{
    if ((b & 0x7fffu) > 0x7c00u) return 0xffffu;        // NaN: the largest key
    if (b == 0x8000u) b = 0u;                            // -0.0 == +0.0
    return (b & 0x8000u) ? (~b & 0xffffu) : (b | 0x8000u);
}

inline uint ga_f32key(uint b)
{
    if ((b & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
    if (b == 0x80000000u) b = 0u;
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

inline ulong ga_f64key(ulong b)
{
    if ((b & 0x7fffffffffffffffUL) > 0x7ff0000000000000UL) return 0xffffffffffffffffUL;
    if (b == 0x8000000000000000UL) b = 0UL;
    return (b & 0x8000000000000000UL) ? ~b : (b | 0x8000000000000000UL);
}

% if width == 8:
inline ${KEY} ga_key(${RAW} r, uint mode) { return mode == 1u ? (uint)(r ^ 0x80u) : (uint)r; }
% elif width == 16:
inline ${KEY} ga_key(${RAW} r, uint mode)
{
    return mode == 1u ? (uint)(r ^ 0x8000u) : mode == 2u ? ga_f16key(r) : (uint)r;
}
% elif width == 32:
inline ${KEY} ga_key(${RAW} r, uint mode)
{
    return mode == 1u ? (r ^ 0x80000000u) : mode == 2u ? ga_f32key(r) : r;
}
% elif width == 64:
// complex64 (re in the low word): non-NaN keys stay below 0xfffffffd in the high word,
// which then ranks the groups with a NaN part after them.
inline ulong ga_c64key(ulong r)
{
    const uint re = (uint)r, im = (uint)(r >> 32);
    const int rn = (re & 0x7fffffffu) > 0x7f800000u, jn = (im & 0x7fffffffu) > 0x7f800000u;
    uint hi = 0xffffffffu, lo = 0xffffffffu;
    if (!rn && !jn) { hi = ga_f32key(re); lo = ga_f32key(im); }
    else if (!rn) { hi = 0xfffffffdu; lo = ga_f32key(re); }
    else if (!jn) { hi = 0xfffffffeu; lo = ga_f32key(im); }
    return ((ulong)hi << 32) | lo;
}

inline ${KEY} ga_key(${RAW} r, uint mode)
{
    return mode == 1u ? (r ^ 0x8000000000000000UL) : mode == 2u ? ga_f64key(r)
        : mode == 3u ? ga_c64key(r) : r;
}
% else:
// complex128 (.s0 re, .s1 im); the key's .s1 is its high word
inline ${KEY} ga_key(${RAW} r, uint mode)
{
    const ulong M = 0x7fffffffffffffffUL, INF = 0x7ff0000000000000UL, ONES = ~0UL;
    const int rn = (r.s0 & M) > INF, jn = (r.s1 & M) > INF;
    ulong hi = ONES, lo = ONES;
    if (!rn && !jn) { hi = ga_f64key(r.s0); lo = ga_f64key(r.s1); }
    else if (!rn) { hi = ONES - 2; lo = ga_f64key(r.s0); }
    else if (!jn) { hi = ONES - 1; lo = ga_f64key(r.s1); }
    return (ulong2)(lo, hi);
}
% endif

% if width == 128:
inline uint ga_digit(${KEY} k, uint shift, uint mask)
{
    return (uint)(shift >= 64u ? k.s1 >> (shift - 64u) : k.s0 >> shift) & mask;
}
inline int ga_less(${KEY} a, ${KEY} b) { return a.s1 < b.s1 || (a.s1 == b.s1 && a.s0 < b.s0); }
inline int ga_equal(${KEY} a, ${KEY} b) { return a.s0 == b.s0 && a.s1 == b.s1; }
inline int ga_isnan(${KEY} k, uint mode) { return k.s1 >= ~0UL - 2; }
% else:
inline uint ga_digit(${KEY} k, uint shift, uint mask) { return (uint)(k >> shift) & mask; }
inline int ga_less(${KEY} a, ${KEY} b) { return a < b; }
inline int ga_equal(${KEY} a, ${KEY} b) { return a == b; }
inline int ga_isnan(${KEY} k, uint mode)
{
% if width == 8:
    return 0;
% elif width == 64:
    return mode == 3u ? (uint)(k >> 32) >= 0xfffffffdu : mode == 2u && k == ~0UL;
% else:
    return mode == 2u && k == ${'0xffffu' if width == 16 else '0xffffffffu'};
% endif
}
% endif

// The digit an element sorts by in a pass: of its key, or of its row (payload / seg_n).
inline uint ga_pass_digit(${RAW} r, uint p, uint mode, uint src, uint shift, uint seg_n,
                          uint mask)
{
    return src ? ((p / seg_n) >> shift) & mask : ga_digit(ga_key(r, mode), shift, mask);
}

// ---- bits that vary between keys: out[w] |= word w of (key(x) ^ key(x[0])), out zeroed
__kernel void sort_diffbits(const uint n, const uint chunk, const uint mode,
                            __global const ${RAW} *kin, __global uint *out)
{
    const uint g = get_group_id(0), lid = get_local_id(0), L = get_local_size(0);
    const uint begin = g * chunk, end = min(begin + chunk, n);
    const ${KEY} k0 = ga_key(kin[0], mode);
    ${KEY} acc = ${ZERO};
    for (uint i = begin + lid; i < end; i += L)
        acc |= ga_key(kin[i], mode) ^ k0;
    __local uint words[${WORDS}];
% if width == 128:
    const uint mine[4] = {(uint)acc.s0, (uint)(acc.s0 >> 32), (uint)acc.s1, (uint)(acc.s1 >> 32)};
% elif width == 64:
    const uint mine[2] = {(uint)acc, (uint)(acc >> 32)};
% else:
    const uint mine[1] = {acc};
% endif
    if (lid == 0)
        for (int w = 0; w < ${WORDS}; ++w) words[w] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = 0; w < ${WORDS}; ++w)
        if (mine[w]) atomic_or(&words[w], mine[w]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        for (int w = 0; w < ${WORDS}; ++w)
            if (words[w]) atomic_or(&out[w], words[w]);
}

// ---- CPUs: a work-item per chunk of `chunk` elements, ${SB}-bit digits
// counts[d * G + g]: elements of chunk g with digit d
__kernel void sort_hist_serial(const uint n, const uint chunk, const uint mode,
                               const uint shift, const uint src, const uint seg_n,
                               const uint pay_mode, __global const ${RAW} *kin,
                               __global const uint *pin, __global uint *counts)
{
    const uint g = get_group_id(0), G = get_num_groups(0);
    const uint begin = g * chunk, end = min(begin + chunk, n);
    __local uint cnt[${SR}];
    for (uint d = 0; d < ${SR}; ++d) cnt[d] = 0u;
    if (src == 0u) {
        for (uint i = begin; i < end; ++i)
            cnt[ga_digit(ga_key(kin[i], mode), shift, ${SR - 1}u)]++;
    } else {
        for (uint i = begin; i < end; ++i)
            cnt[(((pay_mode == 2u ? i : pin[i]) / seg_n) >> shift) & ${SR - 1}u]++;
    }
    for (uint d = 0; d < ${SR}; ++d) counts[d * G + g] = cnt[d];
}

// offsets: the exclusive scan of the counts; a stable scatter in element order
__kernel void sort_scatter_serial(const uint n, const uint chunk, const uint mode,
                                  const uint shift, const uint src, const uint seg_n,
                                  const uint pay_mode,
                                  __global const ${RAW} *kin, __global ${RAW} *kout,
                                  __global const uint *pin, __global uint *pout,
                                  __global const uint *offsets)
{
    const uint g = get_group_id(0), G = get_num_groups(0);
    const uint begin = g * chunk, end = min(begin + chunk, n);
    __local uint off[${SR}];
    for (uint d = 0; d < ${SR}; ++d) off[d] = offsets[d * G + g];
    for (uint i = begin; i < end; ++i) {
        const ${RAW} r = kin[i];
        const uint p = pay_mode == 2u ? i : pay_mode ? pin[i] : 0u;
        const uint at = off[ga_pass_digit(r, p, mode, src, shift, seg_n, ${SR - 1}u)]++;
        kout[at] = r;
        if (pay_mode) pout[at] = p;
    }
}

// ---- exclusive scan of counts[0..m) in place, by one work-group (of at most ${scan_local})
__kernel void sort_scan(const uint m, __global uint *counts)
{
    const uint lid = get_local_id(0), L = get_local_size(0);
    __local uint sums[${scan_local}];
    const uint per = (m + L - 1) / L, begin = min(lid * per, m), end = min(begin + per, m);
    uint s = 0u;
    for (uint i = begin; i < end; ++i) s += counts[i];
    sums[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < L; d <<= 1) {
        const uint v = lid >= d ? sums[lid - d] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        sums[lid] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint run = sums[lid] - s;
    for (uint i = begin; i < end; ++i) {
        const uint v = counts[i];
        counts[i] = run;
        run += v;
    }
}

// ---- GPUs: a work-group per tile of ${T} elements, ${TB}-bit digits (one tile each: PoCL
// 3.1 miscompiles a loop over tiles with barriers in it). Work-item t owns the ${E}
// consecutive elements t*${E}.. of its tile; cnt[d][t] counts its digit-d elements (its own
// column: no atomics, no bank conflicts).
__kernel __attribute__((reqd_work_group_size(${L}, 1, 1)))
void sort_hist_tile(const uint n, const uint mode, const uint shift, const uint src,
                    const uint seg_n, const uint pay_mode, __global const ${RAW} *kin,
                    __global const uint *pin, __global uint *counts)
{
    const uint g = get_group_id(0), G = get_num_groups(0), t = get_local_id(0);
    __local uint cnt[GA_PAD(${TR * L})];
    __local uint part[${L}];
    for (uint d = 0; d < ${TR}; ++d) cnt[GA_PAD(d * ${L} + t)] = 0u;
    const uint base = g * ${T};
% for j in range(E):
    {
        const uint i = base + ${j * L} + t;  // (any order will do for counting: coalesced)
        if (i < n) {
            const uint p = src && pay_mode == 1u ? pin[i] : i;
            cnt[GA_PAD(ga_pass_digit(kin[i], p, mode, src, shift, seg_n, ${TR - 1}u) * ${L} + t)]++;
        }
    }
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
    // digit t / ${L // TR}: its part t % ${L // TR} of ${TR} work-items' counts
    {
        const uint d = t / ${L // TR}, c = t % ${L // TR};
        uint s = 0u;
        for (uint k = 0; k < ${TR}; ++k) s += cnt[GA_PAD(d * ${L} + c * ${TR} + k)];
        part[t] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < ${TR}u) {
        uint s = 0u;
        for (uint c = 0; c < ${L // TR}; ++c) s += part[t * ${L // TR} + c];
        counts[t * G + g] = s;
    }
}

__kernel __attribute__((reqd_work_group_size(${L}, 1, 1)))
void sort_scatter_tile(const uint n, const uint mode, const uint shift, const uint src,
                       const uint seg_n, const uint pay_mode,
                       __global const ${RAW} *kin, __global ${RAW} *kout,
                       __global const uint *pin, __global uint *pout,
                       __global const uint *offsets)
{
    const uint g = get_group_id(0), G = get_num_groups(0), t = get_local_id(0);
    __local uint cnt[GA_PAD(${TR * L})];
    __local uint sums[${L}];
    __local ${RAW} skey[${T}];
    __local uint spay[${T}];
    __local uchar sdig[${T}];
    __local uint start[${TR}];
    const uint base = g * ${T}, first = base + t * ${E};
    // this work-item's elements, in order; digit ${TR} marks one past the end
% for j in range(E):
    ${RAW} r${j} = ${ZERO};
    uint p${j} = first + ${j}, d${j} = ${TR}u;
% endfor
% if VEC:
    if (first + ${E} <= n) {
        const ${RAW}${E} rv = vload${E}(0, kin + first);
% for j in range(E):
        r${j} = rv.s${'%x' % j};
% endfor
        if (pay_mode == 1u) {
            const uint${E} pv = vload${E}(0, pin + first);
% for j in range(E):
            p${j} = pv.s${'%x' % j};
% endfor
        }
    } else
% endif
    {
% for j in range(E):
        if (first + ${j} < n) {
            r${j} = kin[first + ${j}];
            if (pay_mode == 1u) p${j} = pin[first + ${j}];
        }
% endfor
    }
% for j in range(E):
    if (first + ${j} < n) d${j} = ga_pass_digit(r${j}, p${j}, mode, src, shift, seg_n, ${TR - 1}u);
% endfor
    for (uint d = 0; d < ${TR}; ++d) cnt[GA_PAD(d * ${L} + t)] = 0u;
% for j in range(E):
    if (d${j} < ${TR}u) cnt[GA_PAD(d${j} * ${L} + t)]++;
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
    // exclusive scan of cnt in (digit, work-item) order: work-item t scans entries
    // t*${TR}.. serially, a Hillis-Steele scan joins the work-items
    uint own = 0u;
    for (uint k = 0; k < ${TR}; ++k) own += cnt[GA_PAD(t * ${TR} + k)];
    sums[t] = own;
    barrier(CLK_LOCAL_MEM_FENCE);
% for s in [1 << k for k in range(L.bit_length() - 1)]:
    {
        const uint v = t >= ${s}u ? sums[t - ${s}u] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        sums[t] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
% endfor
    uint run = sums[t] - own;
    for (uint k = 0; k < ${TR}; ++k) {
        const uint v = cnt[GA_PAD(t * ${TR} + k)];
        cnt[GA_PAD(t * ${TR} + k)] = run;
        run += v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < ${TR}u) start[t] = cnt[GA_PAD(t * ${L})];
    // the tile in digit order, in local memory: an element's place is its digit's place
    // for this work-item plus its earlier elements of that digit
% for j in range(E):
    if (d${j} < ${TR}u) {
        const uint at = cnt[GA_PAD(d${j} * ${L} + t)]${''.join(' + (d%d == d%d)' % (i, j) for i in range(j))};
        skey[at] = r${j};
        sdig[at] = (uchar)d${j};
        if (pay_mode) spay[at] = p${j};
    }
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
    // coalesced stores: a digit's run of the tile goes to its place after earlier tiles'
    const uint valid = min((uint)${T}, n - base);
% for j in range(E):
    {
        const uint k = ${j * L} + t;
        if (k < valid) {
            const uint d = sdig[k];
            const uint at = offsets[d * G + g] + k - start[d];
            kout[at] = skey[k];
            if (pay_mode) pout[at] = spay[k];
        }
    }
% endfor
}

// ---- short rows (row_len <= p2 <= ${ROWS_MAX}, p2 a power of two): a work-group per row, a
// bitonic network in local memory on (key, index) pairs, which makes it stable; padding
// elements take the largest key and indices past the row, so they go last.
__kernel __attribute__((reqd_work_group_size(${ROWS_LOCAL}, 1, 1)))
void sort_rows(const uint row_len, const uint p2, const uint mode, const uint want_values,
               const uint want_index, __global const ${RAW} *kin, __global ${RAW} *kout,
               __global long *iout)
{
    const uint t = get_local_id(0), base = get_group_id(0) * row_len;
    __local ${KEY} key[${ROWS_MAX}];
    __local ushort idx[${ROWS_MAX}];
    for (uint j = t; j < p2; j += ${ROWS_LOCAL}) {
        key[j] = j < row_len ? ga_key(kin[base + j], mode) : ${KEY_MAX};
        idx[j] = (ushort)j;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint size = 2; size <= p2; size <<= 1) {
        for (uint stride = size >> 1; stride > 0; stride >>= 1) {
            for (uint c = t; c < p2 / 2; c += ${ROWS_LOCAL}) {
                const uint lo = 2 * c - (c & (stride - 1)), hi = lo + stride;
                const ${KEY} ka = key[lo], kb = key[hi];
                const ushort ia = idx[lo], ib = idx[hi];
                const int greater = ga_less(kb, ka) || (ga_equal(ka, kb) && ib < ia);
                if (greater == ((lo & size) == 0)) {
                    key[lo] = kb; key[hi] = ka;
                    idx[lo] = ib; idx[hi] = ia;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    for (uint j = t; j < row_len; j += ${ROWS_LOCAL}) {
        if (want_values) kout[base + j] = kin[base + idx[j]];
        if (want_index) iout[base + j] = idx[j];
    }
}

// ---- argsort's result: the payload's position in its row of seg_n
__kernel void sort_index(const uint n, const uint seg_n, const uint pay_mode,
                         __global const uint *pin, __global long *out)
{
    const uint i = get_global_id(0);
    if (i < n) out[i] = (long)((pay_mode == 2u ? i : pin[i]) % seg_n);
}

// ---- searchsorted: out[i] = the first position in a (through sorter if has_sorter) whose
// element is >= v[i] (left) or > v[i] (right); err |= 1 for a sorter value outside [0, n)
__kernel void sort_search(const uint m, const uint n, const uint mode, const uint right,
                          const uint has_sorter, __global const ${RAW} *a,
                          __global const long *sorter, __global const ${RAW} *v,
                          __global long *out, __global uint *err)
{
    const uint i = get_global_id(0);
    if (has_sorter && i < n && (sorter[i] < 0 || sorter[i] >= (long)n)) atomic_or(err, 1u);
    if (i >= m) return;
    const ${KEY} kv = ga_key(v[i], mode);
    uint lo = 0u, hi = n;
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2u;
        const long j = has_sorter ? sorter[mid] : (long)mid;
        if (j < 0 || j >= (long)n) break;  // reported above
        const ${KEY} ka = ga_key(a[j], mode);
        if (right ? !ga_less(kv, ka) : ga_less(ka, kv)) lo = mid + 1u;
        else hi = mid;
    }
    out[i] = (long)lo;
}

// ---- unique on sorted s: flags[i] = 1 where a new value starts
__kernel void unique_flags(const uint n, const uint mode, const uint equal_nan,
                           __global const ${RAW} *s, __global long *flags)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    long f = 1;
    if (i > 0u) {
        const ${KEY} a = ga_key(s[i - 1u], mode), b = ga_key(s[i], mode);
        const int nb = ga_isnan(b, mode);
        f = equal_nan ? !(ga_equal(a, b) || (nb && ga_isnan(a, mode)))
                      : (nb || !ga_equal(a, b));
    }
    flags[i] = f;
}

// pos: inclusive scan of flags; perm: the sort's permutation (if has_perm)
__kernel void unique_scatter(const uint n, const uint has_perm, const uint want_index,
                             const uint want_inverse, const uint want_starts,
                             __global const long *flags, __global const long *pos,
                             __global const ${RAW} *s, __global const long *perm,
                             __global ${RAW} *values, __global long *index,
                             __global long *inverse, __global long *starts)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const long j = pos[i] - 1;
    if (flags[i]) {
        values[j] = s[i];
        if (want_index) index[j] = perm[i];
        if (want_starts) starts[j] = i;
    }
    if (want_inverse) inverse[has_perm ? perm[i] : (long)i] = j;
}

__kernel void unique_counts(const uint u, const uint n, __global const long *starts,
                            __global long *counts)
{
    const uint j = get_global_id(0);
    if (j < u) counts[j] = (j + 1u < u ? starts[j + 1u] : (long)n) - starts[j];
}
