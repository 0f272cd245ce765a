## Sorting and searching on the raw bits of one element width (gpuarr/sorting.py): a stable
## LSD radix sort with 8-bit digits whose passes turn the raw bits into order-preserving
## unsigned keys on the fly (nothing is transformed in memory, so sorted values keep their
## exact bits), a binary search, and the steps of unique.
## Inputs:
##   width        bits of a raw element: 8, 16, 32, 64, or 128 (complex128 only)
##   tile_local   work-items of the tile kernels (GPUs), a power of two >= 16
##   tile_items   elements per work-item of the tile kernels
##   rows_local   work-items of sort_rows; rows_max: the longest row it takes (power of two)
##   scan_local   the most work-items sort_scan and the unique kernels run with (power of two)
##   hist_copies  copies of the histogram in sort_hist_all's local memory (GPUs: fewer
##                work-items meet at one address)
##   search       (work-items, queries per work-item, samples, bytes of a read at once to
##                end a search) of sort_search_sampled
##   digit        None, or what every pass's digit is taken from: a key `mode` (0-3) or 'row'
##                (the payload's row), fixed at build time
##   keys_only    sort_onesweep (ranked by warps) for sorts without payloads: pay_mode 0 and
##                out_mode 1 fixed at build time, no payload slots in local memory
##   tiles        whether the GPU passes' kernels (sort_hist_all, sort_count_tile,
##                sort_onesweep) are built: not on CPUs, which never run them (Intel's CPU
##                compiler corrupts its heap now and then over them)
##   rank         how sort_onesweep ranks a tile: 'split' (two 4-bit splits, any device) or
##                'warp' (warps of 32 by inline PTX: NVIDIA, compute capability 7 and up;
##                width <= 64, tile_local a multiple of 32 up to 1024); 'warp-emulated'
##                (the same with the warps' exchanges through local memory: tests)
##   reload       (warp ranks, keys_only, width 32 or 64) sort_onesweep reads each key again
##                from global memory (the L2 cache) to put it in its place, instead of holding
##                it in a register over the ranking (fewer registers: more tiles in flight)
## Runtime arguments shared by the kernels:
##   mode      0 unsigned (bool too), 1 signed, 2 IEEE float, 3 complex (64: complex64, 128:
##             complex128); keys follow numpy's order: NaNs last (all NaNs one key), -0.0 ==
##             +0.0, complex lexicographic in numpy's groups [R+Rj, R+nanj, nan+Rj, nan+nanj]
##   pay_mode  payload (an element's original flat index, uint): 0 none, 1 read from pin,
##             2 the index itself (a first pass)
##   src       what a pass sorts by: 0 the key's digit at `shift`; 1 the digit at `shift` of
##             the payload's row, payload / seg_n (sorting rows of seg_n elements)
##   out_mode  what a scatter writes: bit 0 the keys (kout), bit 1 the payload (pout), bit 2
##             the payload's position in its row as int64 (iout: argsort's last pass)
## Defines:
##   sort_diffbits    OR over all keys of key ^ first key: the bits that vary (CPUs: which
##                    passes to skip)
##   sort_hist_all    every key digit's histogram in one read: hist[p * 256 + d] += elements
##                    whose digit p (bits 8p..8p+7 of the key) is d (hist zeroed; a
##                    work-group per chunk, or a work-item: then without atomics); it also
##                    zeroes the first `clear` words of `status` (the passes' look-back words)
##   sort_onesweep    one pass on GPUs, a work-group per tile of tile_local * tile_items
##                    elements: the tile's histogram, its elements ranked by digit in local
##                    memory (`rank`), where each digit's run goes, coalesced
##                    stores. With `lookback`, a tile takes its number from a counter and
##                    finds what earlier tiles hold by decoupled look-back (below); tile 0
##                    scans the pass's histogram hist[base_row * 256 + d] into where each
##                    digit's elements start and publishes those with its counts. Without,
##                    from `offsets` (the scan of sort_count_tile's counts: reduce-then-scan).
##                    With `skip` (a key pass), it writes nothing when the histogram says its
##                    digit is the same in every element
##   sort_count_tile  counts[d * G + g]: elements of tile g with digit d (reduce-then-scan)
##   sort_hist_serial / sort_scatter_serial  CPUs: a work-item per chunk, counts of
##                    [digit][chunk], a stable serial scatter in element order
##   sort_scan        one work-group: exclusive scan of the counts in place
##   sort_rows        short rows whole in local memory, a work-group each
##   sort_index       payload -> int64 position in its row (when no pass ran)
##   sort_search      searchsorted, a work-item per query
##   sort_search_sampled  searchsorted of long arrays without a sorter: samples of a in
##                    local memory take each search's first steps
##   unique_count, unique_write, unique_counts  unique on sorted keys: new values counted
##                    per group, the counts scanned (sort_scan), the values, first indices,
##                    inverse and run starts written; counts from the starts
## Decoupled look-back (status: uint words, zeroed before a sort's first pass): status[pass]
## hands out tile numbers in the order work-groups start; status[32 + g * 256 + d] is tile
## g's word for digit d: tag (bits 30-31: 1 the tile's own count, 2 where digit d's elements
## start in the output plus the count of all tiles up to it: tile 0's from the start), bit
## 29 the pass's parity (a word left by the previous pass reads as not ready), bits 0-28
## the value. A tile publishes its counts, then adds up earlier tiles'
## words from the nearest back to the first that holds a total, waiting only on tiles whose
## work-groups have already started (they took lower numbers): no deadlock whatever order or
## concurrency the device gives work-groups. One word holds tag and value, so no ordering
## between two stores is needed (OpenCL 1.2 has none across work-groups).
<%
    RAW = {8: 'uchar', 16: 'ushort', 32: 'uint', 64: 'ulong', 128: 'ulong2'}[width]
    KEY = {8: 'uint', 16: 'uint', 32: 'uint', 64: 'ulong', 128: 'ulong2'}[width]
    KD = width // 8
    WORDS = {8: 1, 16: 1, 32: 1, 64: 2, 128: 4}[width]
    L = tile_local
    E = tile_items
    T = L * E
    DPI = max(1, 256 // L)
    ROWS_LOCAL = rows_local
    ROWS_MAX = rows_max
    ZERO = '(ulong2)(0, 0)' if width == 128 else '0'
    KEY_MAX = {8: '0xffffffffu', 16: '0xffffffffu', 32: '0xffffffffu', 64: '0xffffffffffffffffUL',
               128: '(ulong2)(~0UL, ~0UL)'}[width]
    SEARCH_LOCAL, SEARCH_QUERIES, SEARCH_SAMPLES, SEARCH_TAIL = search
    SEARCH_SAMPLES = SEARCH_SAMPLES // 2 if width == 128 else SEARCH_SAMPLES
    TAIL = SEARCH_TAIL // max(width // 8, 4)  # a stretch this short is read at once
    # vector loads of a work-item's consecutive elements in the tile kernels
    VEC = E in (2, 4, 8, 16) and width <= 64
    LB = 8  # look-back: earlier tiles' words read at once
%>\
#define GA_PAD(j) ((j) + ((j) >> 5))
#define GA_AGG 0x40000000u
#define GA_INC 0x80000000u
#define GA_VALUE 0x1fffffffu
#define GA_STATUS_HEAD 32u

// ---- order-preserving keys: a < b in numpy's order <=> key(a) < key(b) as unsigned
inline uint ga_f16key(uint b)
{
    if ((b & 0x7fffu) > 0x7c00u) return 0xffffu;        // NaN: the largest key
    if (b == 0x8000u) b = 0u;                            // -0.0 == +0.0
    return (b & 0x8000u) ? (~b & 0xffffu) : (b | 0x8000u);
}

// (selects, not branches: the tile passes compute a key twice an element)
inline uint ga_f32key(uint b)
{
    b = b == 0x80000000u ? 0u : b;
    const uint k = b ^ ((uint)((int)b >> 31) | 0x80000000u);
    return (b & 0x7fffffffu) > 0x7f800000u ? 0xffffffffu : k;
}

inline ulong ga_f64key(ulong b)
{
    b = b == 0x8000000000000000UL ? 0UL : b;
    const ulong k = b ^ ((ulong)((long)b >> 63) | 0x8000000000000000UL);
    return (b & 0x7fffffffffffffffUL) > 0x7ff0000000000000UL ? 0xffffffffffffffffUL : k;
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
% if digit is None:
    return src ? ((p / seg_n) >> shift) & mask : ga_digit(ga_key(r, mode), shift, mask);
% elif digit == 'row':
    return ((p / seg_n) >> shift) & mask;
% else:
    return ga_digit(ga_key(r, ${digit}u), shift, mask);
% endif
}

## Exclusive scan over the work-group of the uint `own`: `out` (a declared uint) gets the sum
## of lower work-items' values, `total` (if given) the sum of all. A Hillis-Steele scan
## ping-ponging between the halves of `buf` (2 * n uints, n work-items); the caller
## separates two uses of buf by a barrier.
<%def name="group_scan(own, out, buf, n, total=None)">\
    ${buf}[get_local_id(0)] = ${own};
    barrier(CLK_LOCAL_MEM_FENCE);
% for k, s in enumerate([1 << j for j in range(n.bit_length() - 1)]):
<% a, b = (0, n) if k % 2 == 0 else (n, 0) %>\
    ${buf}[${b} + get_local_id(0)] = ${buf}[${a} + get_local_id(0)]
        + (get_local_id(0) >= ${s}u ? ${buf}[${a} + get_local_id(0) - ${s}u] : 0u);
    barrier(CLK_LOCAL_MEM_FENCE);
% endfor
<% last = 0 if (n.bit_length() - 1) % 2 == 0 else n %>\
    ${out} = ${buf}[${last} + get_local_id(0)] - ${own};
% if total:
    ${total} = ${buf}[${last + n - 1}];
% endif
</%def>\

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

% if tiles:
// ---- every key digit's histogram in one read of the keys: hist[p * 256 + d] (zeroed) +=
// the elements of chunk g whose key's digit p is d. hist_copies copies in local memory:
// work-item t counts into copy t % hist_copies. status[0..clear) is zeroed on the way.
__kernel void sort_hist_all(const uint n, const uint chunk, const uint mode, const uint clear,
                            __global const ${RAW} *kin, __global uint *hist,
                            __global uint *status)
{
    const uint g = get_group_id(0), t = get_local_id(0), L = get_local_size(0);
    for (uint k = get_global_id(0); k < clear; k += get_global_size(0)) status[k] = 0u;
    __local uint h[${hist_copies * KD * 256}];
    for (uint k = t; k < ${hist_copies * KD * 256}u; k += L) h[k] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint begin = g * chunk, end = min(begin + chunk, n);
    if (L == 1u) {
        for (uint i = begin; i < end; ++i) {
            const ${KEY} k = ga_key(kin[i], mode);
% for p in range(KD):
            h[${p * 256} + ga_digit(k, ${8 * p}u, 255u)]++;
% endfor
        }
    } else {
        __local uint *mine = h + (t % ${hist_copies}u) * ${KD * 256}u;
        for (uint i = begin + t; i < end; i += 4u * L) {  // (four loads in flight)
% for u in range(4):
            const ${RAW} r${u} = i + ${u}u * L < end ? kin[i + ${u}u * L] : ${ZERO};
% endfor
% for u in range(4):
            if (i + ${u}u * L < end) {
                const ${KEY} k = ga_key(r${u}, mode);
% for p in range(KD):
                atomic_inc(&mine[${p * 256} + ga_digit(k, ${8 * p}u, 255u)]);
% endfor
            }
% endfor
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = t; k < ${KD * 256}u; k += L) {
        uint s = 0u;
        for (uint c = 0; c < ${hist_copies}u; ++c) s += h[c * ${KD * 256}u + k];
        if (s) atomic_add(&hist[k], s);
    }
}
% endif

// ---- CPUs: a work-item per chunk of `chunk` elements, 8-bit digits
// counts[d * G + g]: elements of chunk g with digit d
__kernel void sort_hist_serial(const uint n, const uint chunk, const uint mode,
                               const uint shift, const uint src, const uint seg_n,
                               const uint pay_mode, __global const ${RAW} *kin,
                               __global const uint *pin, __global uint *counts)
{
    const uint g = get_group_id(0), G = get_num_groups(0);
    const uint begin = g * chunk, end = min(begin + chunk, n);
    __local uint cnt[256];
    for (uint d = 0; d < 256u; ++d) cnt[d] = 0u;
    if (src == 0u) {
        for (uint i = begin; i < end; ++i)
            cnt[ga_digit(ga_key(kin[i], mode), shift, 255u)]++;
    } else {
        for (uint i = begin; i < end; ++i)
            cnt[(((pay_mode == 2u ? i : pin[i]) / seg_n) >> shift) & 255u]++;
    }
    for (uint d = 0; d < 256u; ++d) counts[d * G + g] = cnt[d];
}

// offsets: the exclusive scan of the counts; a stable scatter in element order
__kernel void sort_scatter_serial(const uint n, const uint chunk, const uint mode,
                                  const uint shift, const uint src, const uint seg_n,
                                  const uint pay_mode, const uint out_mode,
                                  __global const ${RAW} *kin, __global ${RAW} *kout,
                                  __global const uint *pin, __global uint *pout,
                                  __global long *iout, __global const uint *offsets)
{
    const uint g = get_group_id(0), G = get_num_groups(0);
    const uint begin = g * chunk, end = min(begin + chunk, n);
    __local uint off[256];
    for (uint d = 0; d < 256u; ++d) off[d] = offsets[d * G + g];
    // (a loop per kind of output: a test inside the loop costs PoCL a third of its speed)
% for test, stores in (('out_mode == 1u', 'kout[at] = r;'), ('out_mode == 3u', 'kout[at] = r; pout[at] = p;'), ('1', 'if (out_mode & 1u) kout[at] = r; iout[at] = (long)(p % seg_n);')):
    ${'if (%s) ' % test if loop.first else 'else if (%s) ' % test if not loop.last else 'else '}{
        for (uint i = begin; i < end; ++i) {
            const ${RAW} r = kin[i];
            const uint p = pay_mode == 2u ? i : pay_mode ? pin[i] : 0u;
            const uint at = off[ga_pass_digit(r, p, mode, src, shift, seg_n, 255u)]++;
            ${stores}
        }
    }
% endfor
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

% if tiles:
// ---- GPUs: counts[d * G + g], the elements of tile g (of ${T}) with digit d
__kernel __attribute__((reqd_work_group_size(${L}, 1, 1)))
void sort_count_tile(const uint n, const uint mode, const uint shift, const uint src,
                     const uint seg_n, const uint pay_mode, __global const ${RAW} *kin,
                     __global const uint *pin, __global uint *counts)
{
    const uint g = get_group_id(0), G = get_num_groups(0), t = get_local_id(0);
    __local uint cnt[256];
    for (uint d = t; d < 256u; d += ${L}u) cnt[d] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
% for j in range(E):
    {
        const uint i = g * ${T}u + ${j * L}u + t;
        if (i < n) {
            const uint p = src && pay_mode == 1u ? pin[i] : i;
            atomic_inc(&cnt[ga_pass_digit(kin[i], p, mode, src, shift, seg_n, 255u)]);
        }
    }
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = t; d < 256u; d += ${L}u) counts[d * G + g] = cnt[d];
}

## sort_onesweep's last steps, the same in both rankings. `count` and `start` (expressions
## of q): the tile's elements of digit q and where their run starts in the tile (skey/spay).
<%def name="tile_places(count, start)">\
    // where each digit's run of this tile goes: after the digit's elements of earlier tiles
    for (uint q = t; q < 256u; q += ${L}u) {
        uint prefix;
        if (lookback) {
            prefix = 0u;
            if (g) {  // earlier tiles' words ${LB} at a time (their reads overlap), nearest first
                __global uint *w = words + q;
                uint left = g, found = 0u;
                while (!found) {
% for i in range(LB):
                    uint s${i} = ${i}u < left ? ga_poll(w - ${256 * (i + 1)}) : 0u;
% endfor
% for i in range(LB):
                    if (!found && ${i}u < left) {
                        while (!(s${i} & (GA_AGG | GA_INC)) || (s${i} & 0x20000000u) != parity)
                            s${i} = ga_poll(w - ${256 * (i + 1)});
                        prefix += s${i} & GA_VALUE;
                        found = s${i} & GA_INC;
                    }
% endfor
                    if (!found) {  // (tile 0 holds its total: left > ${LB} here)
                        left -= ${LB}u;
                        w -= ${256 * LB};
                    }
                }
                atomic_xchg(&words[q], GA_INC | parity | (prefix + ${count}));
            } else {
                prefix = gofs[q];  // (tile 0: where digit q starts, from tile_bases)
            }
        } else {
            prefix = offsets[q * G + g];
        }
        gofs[q] = prefix - ${start};
    }
    barrier(CLK_LOCAL_MEM_FENCE);
</%def>\
## tile 0 of a look-back pass: gofs[q] = where digit q's elements start in the pass's output
## (the exclusive scan of hist's row base_row); it publishes them with its counts (`publish`)
<%def name="tile_bases()">\
    if (lookback && g == 0u) {
% if rank == 'split':
        uint own = 0u, before;
        for (uint k = 0; k < ${DPI}u; ++k)
            if (t * ${DPI}u + k < 256u) own += hist[base_row * 256u + t * ${DPI}u + k];
${group_scan('own', 'before', 'sums', L)}\
        for (uint k = 0; k < ${DPI}u; ++k) {
            const uint q = t * ${DPI}u + k;
            if (q < 256u) {
                gofs[q] = before;
                before += hist[base_row * 256u + q];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);  // (sums' next use)
% else:
        const uint own = t < 256u ? hist[base_row * 256u + t] : 0u;
        uint run = own;
% for by in (1, 2, 4, 8, 16):
        run += ga_shfl_up(run, ${by}u, GA_LANES) * (lane >= ${by}u);
% endfor
        if (lane == 31u && t < 256u) wsum[warp] = run;
        barrier(CLK_LOCAL_MEM_FENCE);
        run -= own;
        for (uint w = 0; w < warp && w < 8u; ++w) run += wsum[w];
        if (t < 256u) gofs[t] = run;
        barrier(CLK_LOCAL_MEM_FENCE);  // (wsum's next use)
% endif
    }
</%def>\
## a look-back tile's counts for later tiles (tile 0's with where each digit starts)
<%def name="publish(count)">\
    if (lookback)  // the tile's counts: later tiles may be waiting for them
        for (uint q = t; q < 256u; q += ${L}u)
            atomic_xchg(&words[q], g ? GA_AGG | parity | ${count}
                                     : GA_INC | parity | (${count} + gofs[q]));
</%def>\
<%def name="skip_if_constant()">\
    // n: none when `skip` (a key pass enqueued before the host knew whether its digit varies)
    // finds that digit the same in every element; every work-group then runs through with
    // an empty tile and writes nothing (no return: PoCL mishandles barriers after one)
    uint n = n_all;
    if (skip) {
        const uint d = ga_pass_digit(kin[0], 0u, mode, src, shift, seg_n, 255u);
        if (hist[base_row * 256u + d] == n)
            n = 0u;
    }
</%def>\
<%def name="onesweep_signature()">\
__kernel __attribute__((reqd_work_group_size(${L}, 1, 1)))
void sort_onesweep(const uint n_all, const uint mode, const uint shift, const uint src,
                   const uint seg_n, const uint ${'pay_arg' if keys_only else 'pay_mode'},
                   const uint ${'out_arg' if keys_only else 'out_mode'}, const uint pass,
                   const uint lookback, const uint base_row, const uint skip, __global const ${RAW} *kin, __global ${RAW} *kout,
                   __global const uint *pin, __global uint *pout, __global long *iout,
                   __global const uint *hist, __global uint *status,
                   __global const uint *offsets)</%def>\
<%def name="tile_stores()">\
    // coalesced stores: neighbouring work-items, neighbouring places of one digit's run
% for j in range(E):
    {
        const uint k = ${j * L}u + t;
        if (k < valid) {
            const ${RAW} r = skey[k];
            const uint p = pay_mode ? spay[k] : 0u;
            const uint at = gofs[ga_pass_digit(r, p, mode, src, shift, seg_n, 255u)] + k;
            if (out_mode & 1u) kout[at] = r;
            if (out_mode & 2u) pout[at] = p;
            if (out_mode & 4u) iout[at] = (long)(p < seg_n ? p : p % seg_n);
        }
    }
% endfor
</%def>\

% if rank == 'split':
#define ga_poll(p) atomic_or((p), 0u)
// ---- GPUs: one pass, a work-group per tile of ${T} elements. Work-item t owns the ${E}
// consecutive elements t*${E}.. of its tile. The tile is put in digit order in local memory
// by two stable 4-bit splits (low half of the digit, then high half), each counting in
// cnt[half-digit][work-item] (its own column: no atomics; two 16-bit counters a word) and
// scanning that in (half-digit, work-item) order; a digit's run then goes to gofs[d] + its
// place in the tile.
${onesweep_signature()}
{
${skip_if_constant()}\
    const uint t = get_local_id(0), G = get_num_groups(0);
    __local uint cnt[GA_PAD(${8 * L})];
    __local uint sums[${2 * L}];
    __local ${RAW} skey[${T}];
    __local uint spay[${T}];
    __local uint lcount[256], lstart[256], gofs[256];
    __local uint ticket;
    if (t == 0u) ticket = lookback ? atomic_inc(&status[pass]) : get_group_id(0);
    for (uint q = t; q < 256u; q += ${L}u) lcount[q] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint g = ticket, base = g * ${T}u, first = base + t * ${E}u;
    const uint valid = n > base ? min(${T}u, n - base) : 0u;
    __global uint *words = lookback ? status + GA_STATUS_HEAD + (size_t)g * 256u : status;
    const uint parity = (pass & 1u) << 29;
${tile_bases()}\
    // this work-item's elements, in order; digit 256 marks one past the end
% for j in range(E):
    ${RAW} r${j} = ${ZERO};
    uint p${j} = first + ${j}u, d${j} = 256u;
% endfor
% if VEC:
    if (first + ${E}u <= n) {
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
        if (first + ${j}u < n) {
            r${j} = kin[first + ${j}u];
            if (pay_mode == 1u) p${j} = pin[first + ${j}u];
        }
% endfor
    }
% for j in range(E):
    if (first + ${j}u < n) {
        d${j} = ga_pass_digit(r${j}, p${j}, mode, src, shift, seg_n, 255u);
        atomic_inc(&lcount[d${j}]);
    }
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
${publish('lcount[q]')}\
    {  // lstart: where each digit's run starts in the tile
        uint own = 0u, before;
        for (uint k = 0; k < ${DPI}u; ++k)
            if (t * ${DPI}u + k < 256u) own += lcount[t * ${DPI}u + k];
${group_scan('own', 'before', 'sums', L)}\
        for (uint k = 0; k < ${DPI}u; ++k) {
            const uint q = t * ${DPI}u + k;
            if (q < 256u) {
                lstart[q] = before;
                before += lcount[q];
            }
        }
    }
% for rnd in range(2):
    // split ${rnd + 1} of 2: by bits ${4 * rnd}..${4 * rnd + 3} of the digit (16: none); half-digit
    // h counts in the 16-bit half h >> 3 of word h & 7, so one scan of the words scans both
% for j in range(E):
    const uint b${rnd}_${j} = d${j} < 256u ? (d${j} >> ${4 * rnd}u) & 15u : 16u;
% endfor
    for (uint q = 0; q < 8u; ++q) cnt[GA_PAD(q * ${L}u + t)] = 0u;
% for j in range(E):
    if (b${rnd}_${j} < 16u) cnt[GA_PAD((b${rnd}_${j} & 7u) * ${L}u + t)] += 1u << ((b${rnd}_${j} & 8u) << 1);
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
    uint below${rnd};  // elements of half-digits 0..7 in the tile
    {  // exclusive scan of cnt in (word, work-item) order: work-item t takes entries t*8..
       // serially, a scan over the work-group joins them
        uint own = 0u, run;
        for (uint k = 0; k < 8u; ++k) own += cnt[GA_PAD(t * 8u + k)];
${group_scan('own', 'run', 'sums', L, 'below%d' % rnd)}        below${rnd} &= 0xffffu;
        for (uint k = 0; k < 8u; ++k) {
            const uint v = cnt[GA_PAD(t * 8u + k)];
            cnt[GA_PAD(t * 8u + k)] = run;
            run += v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
% for j in range(E):
    if (b${rnd}_${j} < 16u) {
        const uint c = cnt[GA_PAD((b${rnd}_${j} & 7u) * ${L}u + t)];
        const uint at = (b${rnd}_${j} < 8u ? c & 0xffffu : (c >> 16) + below${rnd})${''.join(' + (b%d_%d == b%d_%d)' % (rnd, i, rnd, j) for i in range(j))};
        skey[at] = r${j};
        if (pay_mode) spay[at] = p${j};
    }
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
% if rnd == 0:
    // back in registers, in the order of the first split
% for j in range(E):
    d${j} = 256u;
    if (t * ${E}u + ${j}u < valid) {
        r${j} = skey[t * ${E}u + ${j}u];
        if (pay_mode) p${j} = spay[t * ${E}u + ${j}u];
        d${j} = ga_pass_digit(r${j}, p${j}, mode, src, shift, seg_n, 255u);
    }
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);
% endif
% endfor
${tile_places('lcount[q]', 'lstart[q]')}\
${tile_stores()}\
}

% else:
<%
    assert not reload or (keys_only and width in (32, 64)), "reload: keys of 32 or 64 bits"
    W = L // 32  # warps
    # local memory shared by the warps' counters and digit masks (2 x W x 256) and, after
    # ranking, the tile in digit order (keys, then payloads), in 8-byte words
    UNION = -(-max(2 * W * 256 * 4, T * (width // 8 + (0 if keys_only else 4))) // 8)
%>\
// ---- GPUs: one pass, a work-group per tile of ${T} elements, ranked by warps (NVIDIA: inline
// PTX). Warp w takes the ${32 * E} consecutive elements from w * ${32 * E} of its tile, lane l
// item j the element 32 j + l of them (coalesced loads). Each warp counts into its own 256
// counters (cnt[w * 256 + d]), item by item: the lanes holding one digit find each other
// (each sets its bit in the warp's mask of the digit by a local atomic OR and reads the
// mask back), the highest of them adds their number to the digit's counter and clears the
// mask, and each lane's rank among the warp's elements of its digit is the old count plus
// the lanes below it. One scan of the counters in (digit, warp) order then gives every
// element its place in the tile (stable: warps and items in element order); six barriers
// a pass (two more in tile 0, which scans the pass's histogram).
% if rank == 'warp-emulated':
// (tests, on any device: a warp's exchanges go through local memory `lanes`, every
// work-item of the work-group taking part in each; the kernel calls them unconditionally)
#define GA_LANES lanes
inline uint ga_shfl_idx(const uint x, const uint lane, __local uint *lanes)
{
    const uint t = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    lanes[t] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    return lanes[(t & ~31u) + lane];
}
inline uint ga_shfl_up(const uint x, const uint by, __local uint *lanes)
{
    const uint t = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    lanes[t] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    return (t & 31u) >= by ? lanes[t - by] : x;
}
#define GA_WARP_SYNC() barrier(CLK_LOCAL_MEM_FENCE)
#define ga_poll(p) atomic_or((p), 0u)
#define ga_reload(p) (*(p))
% else:
#define GA_LANES 0
inline uint ga_shfl_idx(const uint x, const uint lane, __local uint *lanes)
{
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(x), "r"(lane));
    return r;
}
inline uint ga_shfl_up(const uint x, const uint by, __local uint *lanes)
{
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, 0x0, 0xffffffff;" : "=r"(r) : "r"(x), "r"(by));
    return r;
}
#define GA_WARP_SYNC() asm volatile("bar.warp.sync 0xffffffff;" ::: "memory")
% if reload:
// a key read again after the ranking (asm: the compiler may not keep the first read's value
// in a register instead)
inline ${RAW} ga_reload(__global const ${RAW} *p)
{
    ${RAW} r;
    asm volatile("ld.global.b${width} %0, [%1];" : "=${'l' if width == 64 else 'r'}"(r) : "l"(p));
    return r;
}
% endif
// a look-back word as the L2 holds it (not an atomic: many work-groups poll at once)
inline uint ga_poll(__global uint *p)
{
    uint r;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(r) : "l"(p) : "memory");
    return r;
}
% endif
${onesweep_signature()}
{
% if keys_only:
    const uint pay_mode = 0u, out_mode = 1u;  // (a build for sorts without payloads)
% endif
${skip_if_constant()}\
    const uint t = get_local_id(0), G = get_num_groups(0), lane = t & 31u, warp = t >> 5;
    __local ulong lmem[${UNION}];
    __local uint *cnt = (__local uint *)lmem;
    __local ${RAW} *skey = (__local ${RAW} *)lmem;
% if not keys_only:
    __local uint *spay = (__local uint *)(skey + ${T});
% else:
    __local uint *spay = 0;
% endif
    __local uint start[257], gofs[256], wsum[${W}];
    __local uint ticket;
% if rank == 'warp-emulated':
    __local uint lanes[${L}];
% endif
    if (t == 0u) ticket = lookback ? atomic_inc(&status[pass]) : get_group_id(0);
    for (uint q = t; q < ${2 * W * 256}u; q += ${L}u) cnt[q] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint g = ticket, base = g * ${T}u, first = base + warp * ${32 * E}u + lane;
    const uint valid = n > base ? min(${T}u, n - base) : 0u;
    __global uint *words = lookback ? status + GA_STATUS_HEAD + (size_t)g * 256u : status;
    const uint parity = (pass & 1u) << 29;
${tile_bases()}\
    // this work-item's elements; those past the end take digit 255: ranked after the tile's
    // elements, never stored, and their count read by no later tile. k: an element's rank
    // (bits 8 up) and digit (bits 0-7), one register (fewer registers: more tiles in flight)
% for j in range(E):
    ${RAW} r${j} = ${ZERO};
    uint p${j} = first + ${32 * j}u, k${j};
    if (first + ${32 * j}u < n) {
        r${j} = kin[first + ${32 * j}u];
        if (pay_mode == 1u) p${j} = pin[first + ${32 * j}u];
    }
% endfor
    {  // ranks within the warp's elements of a digit (every lane takes part in each step):
       // the lanes holding digit d set their bits in the warp's mask of d (local atomics),
       // read it back, and its highest lane clears it after the count
        __local uint *mine = cnt + warp * 256u, *masks = cnt + ${W * 256}u + warp * 256u;
        const uint below = (1u << lane) - 1u;
% for j in range(E):
        {
            const uint d = first + ${32 * j}u < n
                ? ga_pass_digit(r${j}, p${j}, mode, src, shift, seg_n, 255u) : 255u;
            atomic_or(&masks[d], 1u << lane);
            GA_WARP_SYNC();
            const uint peers = masks[d], leader = 31u - clz(peers);
            GA_WARP_SYNC();
            uint old = 0u;
            if (lane == leader) {
                old = mine[d];
                mine[d] = old + popcount(peers);
                masks[d] = 0u;
            }
            k${j} = (ga_shfl_idx(old, leader, GA_LANES) + popcount(peers & below)) << 8 | d;
            GA_WARP_SYNC();
        }
% endfor
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    {  // exclusive scan of the counters in (digit, warp) order: work-item t takes entries
       // 8t..8t+7 (entry c: digit c / ${W}, warp c % ${W}), warps scan by shuffles
        uint own = 0u;
        for (uint c = 8u * t; c < 8u * t + 8u; ++c) own += cnt[(c % ${W}u) * 256u + c / ${W}u];
        uint run = own;
% for by in (1, 2, 4, 8, 16):
        run += ga_shfl_up(run, ${by}u, GA_LANES) * (lane >= ${by}u);
% endfor
        if (lane == 31u) wsum[warp] = run;
        barrier(CLK_LOCAL_MEM_FENCE);
        run -= own;
        for (uint w = 0; w < warp; ++w) run += wsum[w];
        if (t == ${L - 1}u) start[256] = run + own;
        for (uint c = 8u * t; c < 8u * t + 8u; ++c) {
            const uint at = (c % ${W}u) * 256u + c / ${W}u, v = cnt[at];
            if (c % ${W}u == 0u) start[c / ${W}u] = run;
            cnt[at] = run;
            run += v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
${publish('(start[q + 1] - start[q])')}\
% for j in range(E):
    k${j} = (k${j} >> 8) + cnt[warp * 256u + (k${j} & 255u)];
% endfor
    barrier(CLK_LOCAL_MEM_FENCE);  // (the tile takes the counters' place)
% for j in range(E):
% if reload:
    if (first + ${32 * j}u < n) skey[k${j}] = ga_reload(kin + first + ${32 * j}u);
% else:
    skey[k${j}] = r${j};
    if (pay_mode) spay[k${j}] = p${j};
% endif
% endfor
${tile_places('(start[q + 1] - start[q])', 'start[q]')}\
${tile_stores()}\
}
% endif
% endif

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
    if (!has_sorter) {
        while (lo < hi) {
            const uint mid = lo + (hi - lo) / 2u;
            const ${KEY} ka = ga_key(a[mid], mode);
            if (right ? !ga_less(kv, ka) : ga_less(ka, kv)) lo = mid + 1u;
            else hi = mid;
        }
    } else {
        while (lo < hi) {
            const uint mid = lo + (hi - lo) / 2u;
            const long j = sorter[mid];
            if (j < 0 || j >= (long)n) break;  // reported above
            const ${KEY} ka = ga_key(a[j], mode);
            if (right ? !ga_less(kv, ka) : ga_less(ka, kv)) lo = mid + 1u;
            else hi = mid;
        }
    }
    out[i] = (long)lo;
}

// ---- searchsorted without a sorter, n >= ${SEARCH_SAMPLES}: a work-group of ${SEARCH_LOCAL} reads the keys at
// positions j * n / ${SEARCH_SAMPLES} into local memory and places each of its queries among them
// there, leaving a's stretch between two samples to search; work-item t takes queries
// (group * ${SEARCH_QUERIES} + q) * ${SEARCH_LOCAL} + t, their searches interleaved (loads in flight together)
__kernel __attribute__((reqd_work_group_size(${SEARCH_LOCAL}, 1, 1)))
void sort_search_sampled(const uint m, const uint n, const uint mode, const uint right,
                         __global const ${RAW} *a, __global const ${RAW} *v,
                         __global long *out)
{
    __local ${KEY} sample[${SEARCH_SAMPLES}];
    const uint t = get_local_id(0);
    for (uint j = t; j < ${SEARCH_SAMPLES}u; j += ${SEARCH_LOCAL}u)
        sample[j] = ga_key(a[(uint)((ulong)j * n / ${SEARCH_SAMPLES}u)], mode);
    barrier(CLK_LOCAL_MEM_FENCE);
    // before(x): x goes before the query (left: x < query; right: x <= query)
% for q in range(SEARCH_QUERIES):
    const uint i${q} = (get_group_id(0) * ${SEARCH_QUERIES}u + ${q}u) * ${SEARCH_LOCAL}u + t;
    const ${KEY} kv${q} = ga_key(v[min(i${q}, m - 1u)], mode);
    uint lo${q}, len${q};
    {
        uint jlo = 0u, jhi = ${SEARCH_SAMPLES}u;  // samples that go before: [0, jlo)
        while (jlo < jhi) {
            const uint mid = (jlo + jhi) / 2u;
            const ${KEY} x = sample[mid];
            if (right ? !ga_less(kv${q}, x) : ga_less(x, kv${q})) jlo = mid + 1u;
            else jhi = mid;
        }
        lo${q} = jlo ? (uint)((ulong)(jlo - 1u) * n / ${SEARCH_SAMPLES}u) + 1u : 0u;
        len${q} = (jlo < ${SEARCH_SAMPLES}u ? (uint)((ulong)jlo * n / ${SEARCH_SAMPLES}u) : n) - lo${q};
    }
% endfor
    // halve the stretches down to ${TAIL} elements, then read those at once and count
    while (${' || '.join(f'len{q} > {TAIL}u' for q in range(SEARCH_QUERIES))}) {
% for q in range(SEARCH_QUERIES):
        const ${RAW} r${q} = len${q} > ${TAIL}u ? a[lo${q} + len${q} / 2u] : ${ZERO};
% endfor
% for q in range(SEARCH_QUERIES):
        if (len${q} > ${TAIL}u) {
            const uint below = len${q} / 2u;
            const ${KEY} x = ga_key(r${q}, mode);
            if (right ? !ga_less(kv${q}, x) : ga_less(x, kv${q})) {
                lo${q} += below + 1u;
                len${q} -= below + 1u;
            } else {
                len${q} = below;
            }
        }
% endfor
    }
% for q in range(SEARCH_QUERIES):
% for e in range(TAIL):
    const ${RAW} r${q}_${e} = ${e}u < len${q} ? a[lo${q} + ${e}u] : ${ZERO};
% endfor
% endfor
% for q in range(SEARCH_QUERIES):
    {
        uint before = 0u;
% for e in range(TAIL):
        {
            const ${KEY} x = ga_key(r${q}_${e}, mode);
            before += ${e}u < len${q} && (right ? !ga_less(kv${q}, x) : ga_less(x, kv${q}));
        }
% endfor
        if (i${q} < m) out[i${q}] = (long)(lo${q} + before);
    }
% endfor
}

// ---- unique on sorted s. Work-item t of group g takes the `per` elements from
// (g * L + t) * per; element i starts a new value when it differs from element i - 1
// (equal_nan: all NaNs are one value).
inline int ga_starts(${KEY} a, ${KEY} b, uint mode, uint equal_nan)
{
    const int nb = ga_isnan(b, mode);
    return equal_nan ? !(ga_equal(a, b) || (nb && ga_isnan(a, mode))) : (nb || !ga_equal(a, b));
}

inline uint ga_new_values(__global const ${RAW} *s, uint begin, uint end, uint mode,
                          uint equal_nan)
{
    uint c = 0u;
    ${KEY} prev = ga_key(s[begin ? begin - 1u : 0u], mode);
    for (uint i = begin; i < end; ++i) {
        const ${KEY} k = ga_key(s[i], mode);
        c += i == 0u || ga_starts(prev, k, mode, equal_nan);
        prev = k;
    }
    return c;
}

// counts[g]: new values in group g's elements (counts[G] = 0, for the scan's total)
__kernel void unique_count(const uint n, const uint per, const uint mode, const uint equal_nan,
                           __global const ${RAW} *s, __global uint *counts)
{
    const uint g = get_group_id(0), t = get_local_id(0), L = get_local_size(0);
    const uint begin = min((g * L + t) * per, n), end = min(begin + per, n);
    __local uint total;
    if (t == 0u) total = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint c = begin < end ? ga_new_values(s, begin, end, mode, equal_nan) : 0u;
    if (c) atomic_add(&total, c);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0u) {
        counts[g] = total;
        if (g == 0u) counts[get_num_groups(0)] = 0u;
    }
}

// offsets: the exclusive scan of unique_count's counts. want: bit 0 index (the first
// occurrence, perm[i]), bit 1 inverse (inverse[perm[i]] = its value's number), bit 2 starts
__kernel void unique_write(const uint n, const uint per, const uint mode, const uint equal_nan,
                           const uint want, __global const ${RAW} *s,
                           __global const long *perm, __global const uint *offsets,
                           __global ${RAW} *values, __global long *index,
                           __global long *inverse, __global long *starts)
{
    const uint g = get_group_id(0), t = get_local_id(0), L = get_local_size(0);
    const uint begin = min((g * L + t) * per, n), end = min(begin + per, n);
    __local uint sums[${scan_local}];
    const uint own = begin < end ? ga_new_values(s, begin, end, mode, equal_nan) : 0u;
    sums[t] = own;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < L; d <<= 1) {
        const uint v = t >= d ? sums[t - d] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        sums[t] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    long j = (long)(offsets[g] + sums[t] - own) - 1;  // the value of the element before
    if (begin >= end) return;
    ${KEY} prev = ga_key(s[begin ? begin - 1u : 0u], mode);
    for (uint i = begin; i < end; ++i) {
        const ${RAW} r = s[i];
        const ${KEY} k = ga_key(r, mode);
        if (i == 0u || ga_starts(prev, k, mode, equal_nan)) {
            ++j;
            values[j] = r;
            if (want & 1u) index[j] = perm[i];
            if (want & 4u) starts[j] = i;
        }
        if (want & 2u) inverse[perm[i]] = j;
        prev = k;
    }
}

__kernel void unique_counts(const uint u, const uint n, __global const long *starts,
                            __global long *counts)
{
    const uint j = get_global_id(0);
    if (j < u) counts[j] = (j + 1u < u ? starts[j + 1u] : (long)n) - starts[j];
}
