## Kernels of gpuarr/factorizations.py: unblocked factorizations and triangular solves of whole
## small matrices (a batch: one work-group or work-item per matrix) and of the diagonal blocks
## and panels of the blocked algorithms, whose updates are GEMMs.
## Inputs: dtype ('float32', 'float64', 'complex64', 'complex128'), ls (the work-group size),
## part: 'main' (every kernel below but the panels), 'getrf_panel' or 'geqrf_panel' (that
## kernel, of one shape: rpt, lw, pw, ch, unroll), 'getrf_grid' or 'geqrf_grid' (pw, rw, warp),
## 'trsm_grid' (pw, rc, lc), 'sytrd_grid' (mc, rows, rch, rb); main: nb (potrf_leaf's
## largest n), tb and cb (trsm_tile's largest n, and columns a work-group), kb (potrf_leaf's columns and trsm_tile's rows a
## step), pc (potrf_panel's columns of b a work-group), gpu (False: without the work-group
## kernels potrf_leaf, potrf_panel, tril_blocks, laswp_group and trsm_tile, which CPUs never
## run; Intel's CPU compiler took 35 s over a complex128 program with them, 1.2 s without).
## Every matrix argument is (pointer, offset, batch stride, row stride, column stride) in
## elements; sizes, flags and offsets are arguments, so one build serves every shape.
## Defines (part 'main'):
##   potrf_leaf(n, base, want_w, a..., l..., w..., info): the lower Cholesky factor L of each
##     n x n matrix a (n <= nb; its lower triangle is read) into l (strict upper triangle 0;
##     l may be a), and with want_w W = L^-H into w; info[b] = base + k + 1 at the first
##     non-positive pivot k. One work-group per matrix, the matrix in local memory.
##   potrf1(count, n, base, want_w, a..., l..., w..., info): the same, one work-item per matrix.
##   potrf_panel(n, m, base, a..., l..., b..., info): a step of the blocked Cholesky in one
##     launch: potrf_leaf's L of the n x n block a into l (not a), and b = conj(L)^-1 b for
##     the n x m b (the panel below a, transposed) in place; PC columns of b a work-group.
##   tril_blocks(n, nb, a..., d...): a's strict upper triangle zeroed, its nb x nb diagonal
##     blocks from d's rows (the factors potrf_panel put there).
##   getrf(m, n, base, a..., piv, piv_off, piv_sb, info): in-place LU with partial pivoting
##     of each m x n matrix (LAPACK's getf2) from global memory, one work-group per matrix;
##     piv[b, k] = base + the row swapped with row k; info[b] = base + k + 1 at the first
##     exactly zero pivot (the factorization goes on).
##   getrf1(count, m, n, base, a..., piv, piv_off, piv_sb, info), getrs1(count, n, nrhs,
##     lu..., piv, piv_off, piv_sb, b...) (b = A^-1 b from A's LU factors): one work-item per
##     matrix (count matrices), no barriers: for CPUs.
##   laswp(rows_base, npiv, ncols, reverse, skip0, skip1, a..., piv, piv_off, piv_sb): the
##     row swaps of piv[0:npiv] (minus rows_base) applied in order (last first when
##     `reverse`) to the columns of a but those in [skip0, skip1); work-items over columns.
##   laswp_group(laswp's arguments): the same for npiv <= SWAPS (GPUs): a work-group of
##     ls work-items takes sc columns; it works out which rows the swaps move and where each
##     one's content comes from (a scan of piv a row), then reads those rows' elements of its
##     columns into local memory and writes them to their places (two passes, not npiv
##     dependent swaps a column).
##   pivots_to_perm(count, n, reverse, piv, piv_off, piv_sb, perm): perm[b] (n ints a matrix)
##     = the positions 0..n-1 after piv's swaps, in order or last first: the row (column)
##     permutation as one gather. Work-items over (positions, batch).
##   gather(rows, cols, by_cols, x..., perm, perm_off, perm_sb, y...): y[i][j] =
##     x[perm[i]][j] (by rows) or x[i][perm[j]] (by_cols), perm a matrix's from perm_off;
##     work-items over (columns, rows, batch).
##   trsm(n, nrhs, lower, unit, conj_t, ident, t..., b...): b = t^-1 b in place, t lower or
##     upper triangular (unit diagonal when `unit`), conj(t) when conj_t; with `ident` b's
##     input is taken as the identity (not read). Work-items over columns of b.
##   trsm_tile(trsm's arguments, use_dg, dg, dg_off, dg_sb): the same for n <= tb, one
##     work-group per cb columns of b (in registers), t's triangle in local memory (GPUs);
##     with use_dg the diagonal's inverses are dg[b, i] (t's diagonal is not read): with
##     t = V^H V, dg = tau, upper and ident, the T of the block reflector H1 ... Hk =
##     I - V T V^H (T^-1 = diag(1 / tau) + the strict upper triangle of V^H V; tau = 0 gives
##     T's row and column 0, as LAPACK's larft).
##   syevj1(count, n, upper, a..., v..., w, w_off, w_sb): eigenvalues (ascending, into w) and
##     eigenvectors (the columns of v) of each Hermitian matrix a (its lower triangle, or the
##     upper when `upper`; a is overwritten) by cyclic Jacobi, one work-item per matrix.
## Defines (parts 'getrf_panel', 'geqrf_panel'): one work-group of ls work-items per matrix,
## each holding rpt rows (lid + q ls) of lw columns at a time in registers, updating the rest
## of the panel ch columns at a time; panels of w <= pw columns. `unroll`: the column loop
## of a block unrolled (GPUs: register arrays need literal indices), else a loop (PoCL):
##   getrf_panel(m, w, base, a..., piv, piv_off, piv_sb, info): getrf's result for an m x w
##     panel (m >= w): column blocks of lw factored in registers, the rest of the panel
##     updated after each block; the row swaps applied to all w columns.
##   geqrf_panel(m, w, want_vh, a..., v..., vh..., tau, tau_off, tau_sb): Householder QR of
##     an m x w panel (m >= w), LAPACK's geqr2 (R on and above the diagonal, the reflectors
##     below, tau), and V explicitly (unit diagonal, zeros above) into v, V^H into vh when
##     want_vh.
## Defines (parts 'getrf_grid', 'geqrf_grid', 'trsm_grid', 'sytrd_grid'): one matrix, its
## rows spread over work-groups that meet at barriers in global memory (ints[at] counts
## arrivals; the caller zeroes it and launches at most one work-group a compute unit);
## info[0] = -1 where a barrier gave up (the groups did not all run at once), nothing
## computed:
##   getrf_grid(m, w, base, nsync, at, left, right, a..., piv, piv_off, piv_sb, info, ints,
##     xs, track, order): getrf_panel's result for an m x w panel (w <= pw), rw rows a
##     work-group in local memory, `warp` work-items leading each column (32: NVIDIA's PTX,
##     with `redux` its warp reductions by redux.sync; 1: portable); xs holds the
##     candidates (values, rows),
##     ints[nsync:] their row numbers. Then the panel's row swaps applied to the `left`
##     columns before the panel and the `right` after it (sc at a time, as laswp_group's,
##     2 pw sc / ls a work-item): work-groups past the panel's rows (r0 >= m) only do that;
##     with `track`, the same moves on the rows' order (order, 2 (base + m) ints).
##   geqrf_grid(m, w, want_vh, at, a..., v..., vh..., tau, tau_off, tau_sb, ints, xs, info):
##     geqrf_panel's result, rw rows a work-group; xs holds the partial sums and row k.
##   trsm_grid(n, r, lower, at, t..., dinv..., b..., x..., ints, info): x = t^-1 b (r <= rc
##     right-hand sides) by blocks of pw rows, dinv the inverses of t's diagonal blocks,
##     ints[at:at + blocks] zeroed flags (block k of x written); the triangle's blocks pass
##     through local memory lc columns at a time.
##   sytrd_grid(n, a..., d, e, tau, vt, ints, pv, kv, info): Householder tridiagonalization
##     of the Hermitian n x n a (both triangles; overwritten), LAPACK's hetd2: d, e, tau and
##     the reflectors as vt's rows; work-group g holds rows g, g + G, ... (at most `rows`),
##     a work-item mc columns of the vectors in registers; each step one barrier (ints[0]),
##     pv and kv the groups' parts of p = A v and v^H p (double-buffered); its rows' sums
##     rch rows at a time, their loads rb rows at a time.
## The grid parts hand data between work-groups at the device's scope: by PTX's release and
## acquire operations with `acqrel` (cltypes.device_acqrel), else around `fence`, the
## statement that fences global memory at that scope (cltypes.device_fence).
<%page args="dtype, ls, part='main', nb=64, tb=128, cb=32, rpt=1, lw=1, pw=64, ch=1,
            unroll=True, rw=64, warp=1, rc=32, lc=16, nm=32, solve=False, kb=4, pc=32, jb=16,
            tc=64, swaps=64, sc=32, fence=None,
            acqrel=False, redux=False, gpu=True, mc=1, rows=1, rch=2, rb=1"/>\
<%
    cplx = dtype.startswith('complex')
    R = 'double' if dtype in ('float64', 'complex128') else 'float'
    T = R + '2' if cplx else R
%>\
% if R == 'double':
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
#define LS ${ls}
typedef ${T} T;
typedef ${R} R;
% if cplx:
#define MUL(a, b) ((T)((a).x * (b).x - (a).y * (b).y, (a).x * (b).y + (a).y * (b).x))
#define CONJ(a) ((T)((a).x, -(a).y))
#define RE(a) ((a).x)
#define IM(a) ((a).y)
#define ABS1(a) (fabs((a).x) + fabs((a).y))
#define ISZERO(a) ((a).x == 0 && (a).y == 0)
#define FROM_R(r) ((T)((r), 0))
inline T DIV(T a, T b)
{
    const R s = fmax(fabs(b.x), fabs(b.y));
    const T bs = b / s;
    const R d = bs.x * bs.x + bs.y * bs.y;
    return MUL(a, CONJ(bs)) / (s * d);
}
% else:
#define MUL(a, b) ((a) * (b))
#define CONJ(a) (a)
#define RE(a) (a)
#define IM(a) ((R)0)
#define ABS1(a) fabs(a)
#define ISZERO(a) ((a) == 0)
#define FROM_R(r) (r)
#define DIV(a, b) ((a) / (b))
% endif
#define EPS ${'DBL_EPSILON' if R == 'double' else 'FLT_EPSILON'}
#define MAT(name) __global T *name, const long name##_off, const long name##_sb, \
                  const long name##_sr, const long name##_sc
#define AT(name, i, j) name[name##_off + bat * name##_sb + (long)(i) * name##_sr \
                            + (long)(j) * name##_sc]

<%def name="swap_moves(npiv, base, reverse)">\
## The moves of the row swaps k <-> pv[k] - base (k < npiv; pv, row and src: local arrays
## of npiv, 2 npiv and 2 npiv): slot t < npiv is row t; slot npiv + k row pv[k] - base where
## that is past the first npiv rows and no earlier pivot names it. src[t]: the row whose
## content the swaps bring to row[t] (the swaps undone from the last, or from the first
## when `reverse`); a slot whose row keeps its content is -1.
    for (int t = lid; t < 2 * (${npiv}); t += LS) {
        int r = t;
        if (t >= ${npiv}) {
            const int k = t - ${npiv};
            r = pv[k] - ${base};
            if (r < ${npiv})
                r = -1;
            for (int i = 0; i < k && r >= 0; ++i)
                if (pv[i] - ${base} == r)
                    r = -1;
        }
        int from = r;
        for (int i = 0; i < ${npiv} && r >= 0; ++i) {
            const int k = ${reverse} ? i : ${npiv} - 1 - i;
            const int p = pv[k] - ${base};
            from = from == k ? p : from == p ? k : from;
        }
        row[t] = from == r ? -1 : r;
        src[t] = from;
    }
</%def>\
% if part in ('getrf_grid', 'trsm_grid', 'geqrf_grid', 'sytrd_grid'):
/* Kernels whose work-groups meet at barriers in global memory (at most one a compute unit,
   so that all run at once): a counter a barrier, `target` = the arrivals it waits for. */
#define SPIN_MAX (1 << 25)  /* polls: ~10 s on an H100, a fraction of one on CPUs */
/* release_add(p): *p += 1 once the work-item's earlier writes, and those it saw at a
   barrier, are visible to the device; acquire_load(p): *p, the work-item's later reads
   ordered after it (read each time: no cached copy). */
% if acqrel:
inline void release_add(__global volatile int *p)
{
    asm volatile("red.release.gpu.global.add.s32 [%0], 1;" :: "l"((ulong)p) : "memory");
}

inline int acquire_load(__global volatile int *p)
{
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"((ulong)p) : "memory");
    return v;
}
% else:
inline void release_add(__global volatile int *p)
{
    ${fence};
    atomic_inc(p);
}

inline int acquire_load(__global volatile int *p)
{
    const int v = *p;
    ${fence};
    return v;
}
% endif

/* Wait (grid_poll) or arrive and wait (grid_wait): 1 when not every work-group arrived
   within SPIN_MAX polls (they did not all run at once: an error, not a hang). */
inline int grid_poll(__global volatile int *counter, const int target)
{
    for (int spins = 0; acquire_load(counter) < target; ++spins)
        if (spins > SPIN_MAX)
            return 1;
    return 0;
}

inline int grid_wait(__global volatile int *counter, const int target)
{
    release_add(counter);
    return grid_poll(counter, target);
}

% endif
% if part == 'main':
/* the first i >= lo with i = start (mod step) */
inline int first_from(const int start, const int step, const int lo)
{
    return lo <= start ? start : lo + ((start - lo) % step + step) % step;
}
#define NB ${nb}
#define RSTEP (LS >= NB ? LS / NB : 1)  /* potrf_leaf runs with LS >= NB */
#define KB ${kb}
#define TB ${tb}
#define CB ${cb}
#define RG (LS / CB)
#define PC ${pc}

## potrf_leaf's and potrf_panel's Cholesky factorization of the n x n matrix a (its lower
## triangle) in local memory: afterwards s's lower triangle holds L and dg its diagonal (no
## barrier after), the factor is stored into l (where `store`, a condition, if given); at a
## non-positive pivot info is set (the same) and the kernel returns. Needs s, dg, bat, lid,
## jc, i0, mine; kb >= 2.
<%def name="chol_in_local(store)">\
    /* Work-item (jc, i0) owns column jc, rows i0, i0 + RSTEP, ... of the matrix in s, whose
       columns stay unscaled (s = L diag(L)). A step takes KB columns, one barrier: every
       work-item factors their KB x KB diagonal block in registers (V, pivots D, g[c][c'] =
       conj(V[c][c']) / D[c']), a column right of the block takes the block's rank-KB
       update, and the block's own columns are finished into s's upper triangle (the lower
       one is read during the step). With v = (I + g)^-1 x a row's finished block part from
       its current one x, the update of s[i][jc] is x_i . h with h = (I + g)^-T f, f[c] =
       conj(v_jc[c]) / D[c]: KB products a row, as in a rank-KB update.
       (Measured on H100/H200s against the whole steps in registers: as fast for one
       matrix, and for batches of small ones twice as fast: the registers cut how many
       work-groups an SM holds.) */
    {  /* every load in flight before the first store */
% for u in range(-(-nb // max(1, ls // nb))):
        const int row${u} = i0 + ${u} * RSTEP;
        const int in${u} = mine && row${u} >= jc && row${u} < n;
        const T x${u} = in${u} ? AT(a, row${u}, jc) : FROM_R(0);
% endfor
% for u in range(-(-nb // max(1, ls // nb))):
        if (in${u})
            s[row${u}][jc] = x${u};
% endfor
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int k = n;
    for (int k0 = 0; k0 < n; k0 += KB) {
        const int kc = min(KB, n - k0);  /* the block's columns (rows past it: 0, pivot 1) */
        int bad = KB;
% for c in range(kb):
        /* the block's row ${c} */
%   for c2 in range(c):
        T v${c}_${c2} = ${c} < kc ? s[k0 + ${c}][k0 + ${c2}] : FROM_R(0);
%     for c3 in range(c2):
        v${c}_${c2} -= MUL(v${c}_${c3}, g${c2}_${c3});
%     endfor
        const T g${c}_${c2} = CONJ(v${c}_${c2}) * r${c2};
%   endfor
        T dd${c} = ${c} < kc ? s[k0 + ${c}][k0 + ${c}] : FROM_R(1);
%   for c2 in range(c):
        dd${c} -= MUL(v${c}_${c2}, g${c}_${c2});
%   endfor
        const R d${c} = RE(dd${c}), r${c} = 1 / d${c};
        if (bad == KB && ${c} < kc && !(d${c} > 0))  /* NaN too; the same in every work-item */
            bad = ${c};
% endfor
        if (bad < KB) {
            k = k0 + bad;
            break;
        }
        if (lid < kc)
            dg[k0 + lid] = sqrt(${' : '.join('lid == %d ? d%d' % (c, c) for c in range(kb - 1))} : d${kb - 1});
        if (mine && jc >= k0 + KB) {  /* the rank-KB update of column jc */
% for c in range(kb):
            T vj${c} = s[jc][k0 + ${c}];
%   for c2 in range(c):
            vj${c} -= MUL(vj${c2}, g${c}_${c2});
%   endfor
% endfor
% for c in reversed(range(kb)):
            T h${c} = CONJ(vj${c}) * r${c};
%   for c2 in range(c + 1, kb):
            h${c} -= MUL(g${c2}_${c}, h${c2});
%   endfor
% endfor
            for (int i = first_from(i0, RSTEP, jc); i < n; i += RSTEP)
                s[i][jc] -= ${' + '.join('MUL(s[i][k0 + %d], h%d)' % (c, c) for c in range(kb))};
        } else if (mine && jc >= k0 && jc < k0 + kc) {  /* finish the block's column jc */
            const int own = jc - k0;
            for (int i = first_from(i0, RSTEP, jc + 1); i < n; i += RSTEP) {
                T u0 = s[i][k0];
% for c in range(1, kb):
                T u${c} = FROM_R(0);
                if (own >= ${c}) {
                    u${c} = s[i][k0 + ${c}];
%   for c2 in range(c):
                    u${c} -= MUL(u${c2}, g${c}_${c2});
%   endfor
                }
% endfor
                s[jc][i] = ${' : '.join('own == %d ? u%d' % (c, c) for c in range(kb - 1))} : u${kb - 1};
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (k < n) {
        if (lid == 0${'' if store is None else ' && ' + store} && info[bat] == 0)
            info[bat] = base + k + 1;
        return;
    }
    if (mine)
        for (int i = i0; i < n; i += RSTEP) {
            T x = FROM_R(0);
            if (i == jc) {
                x = FROM_R(dg[jc]);
            } else if (i > jc) {
                x = s[jc][i] / dg[jc];
                s[i][jc] = x;
            }
% if store is None:
            AT(l, i, jc) = x;
% else:
            if (${store})
                AT(l, i, jc) = x;
% endif
        }
</%def>\
% if gpu:
__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void potrf_leaf(const int n, const int base, const int want_w, MAT(a), MAT(l), MAT(w),
                __global int *info)
{
    __local T s[NB][NB + 1];
    __local T col[2][NB];
    __local R dg[NB];
    const long bat = get_group_id(0);
    const int lid = get_local_id(0);
    const int jc = lid % NB, i0 = lid / NB;
    const int mine = jc < n;
${chol_in_local(None)}\
    if (!want_w)
        return;
    /* L X = I a column of L at a time, X = diag(1 / dg) Y with Y's strict lower triangle
       taking L's place in s (column k of L is copied aside, col, the step before) */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mine && jc == 0)
        for (int i = first_from(i0, RSTEP, 1); i < n; i += RSTEP)
            col[0][i] = s[i][0];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (k = 0; k < n; ++k) {
        if (mine && jc == k + 1)
            for (int i = first_from(i0, RSTEP, k + 2); i < n; i += RSTEP)
                col[(k + 1) & 1][i] = s[i][k + 1];
        if (mine && jc <= k) {
            const R rk = 1 / dg[k];
            const T y = jc == k ? FROM_R(rk) : s[k][jc] * rk;  /* X[k][jc] */
            for (int i = first_from(i0, RSTEP, k + 1); i < n; i += RSTEP) {
                const T lik = col[k & 1][i];
                if (jc == k)
                    s[i][jc] = -MUL(lik, y);
                else
                    s[i][jc] -= MUL(lik, y);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (mine)
        for (int i = i0; i < n; i += RSTEP) {
            T x = FROM_R(0);
            if (i == jc)
                x = FROM_R(1 / dg[i]);
            else if (jc > i)
                x = CONJ(s[jc][i]) / dg[jc];
            AT(w, i, jc) = x;
        }
}
% endif

__kernel void potrf1(const int count, const int n, const int base, const int want_w, MAT(a),
                     MAT(l), MAT(w), __global int *info)
{
    const long bat = get_global_id(0);
    if (bat >= count)
        return;
    /* row by row (Cholesky-Banachiewicz): the inner products run along rows */
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j <= i; ++j) {
            T x = AT(a, i, j);
            for (int k = 0; k < j; ++k)
                x -= MUL(AT(l, i, k), CONJ(AT(l, j, k)));
            if (j < i) {
                AT(l, i, j) = x / RE(AT(l, j, j));
                continue;
            }
            const R d = RE(x);
            if (!(d > 0)) {
                if (info[bat] == 0)
                    info[bat] = base + i + 1;
                return;
            }
            AT(l, i, i) = FROM_R(sqrt(d));
        }
        for (int j = i + 1; j < n; ++j)
            AT(l, i, j) = FROM_R(0);
    }
    if (!want_w)
        return;
    /* W = L^-H: column j of X = L^-1 by substitution, stored conjugated as row j of W */
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < j; ++i)
            AT(w, j, i) = FROM_R(0);
        for (int i = j; i < n; ++i) {
            T x = FROM_R((R)(i == j));
            for (int k = j; k < i; ++k)
                x -= MUL(AT(l, i, k), CONJ(AT(w, j, k)));
            AT(w, j, i) = CONJ(x / RE(AT(l, i, i)));
        }
    }
}

__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void getrf(const int m, const int n, const int base, MAT(a),
           __global int *piv, const long piv_off, const long piv_sb, __global int *info)
{
    __local R best[LS];
    __local int where[LS];
    const long bat = get_group_id(0);
    const int lid = get_local_id(0);
    const int kmax = min(m, n);
    for (int k = 0; k < kmax; ++k) {
        R v = -1;
        int w = k;
        for (int i = k + lid; i < m; i += LS) {
            const R x = ABS1(AT(a, i, k));
            if (x > v || (x != x && v == v)) {  /* a NaN wins, as LAPACK's i?amax */
                v = x;
                w = i;
            }
        }
        best[lid] = v;
        where[lid] = w;
        for (int s = LS / 2; s > 0; s >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < s) {
                const R o = best[lid + s];
                const int ow = where[lid + s];
                if (o > best[lid] || (o == best[lid] && ow < where[lid])) {
                    best[lid] = o;
                    where[lid] = ow;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int p = where[0];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0)
            piv[piv_off + bat * piv_sb + k] = base + p;
        if (p != k) {
            for (int j = lid; j < n; j += LS) {
                const T x = AT(a, k, j);
                AT(a, k, j) = AT(a, p, j);
                AT(a, p, j) = x;
            }
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        const T d = AT(a, k, k);
        if (ISZERO(d)) {
            if (lid == 0 && info[bat] == 0)
                info[bat] = base + k + 1;
            barrier(CLK_GLOBAL_MEM_FENCE);
            continue;
        }
        for (int i = k + 1 + lid; i < m; i += LS)
            AT(a, i, k) = DIV(AT(a, i, k), d);
        barrier(CLK_GLOBAL_MEM_FENCE);
        const int c = n - k - 1;
        const int rows = m - k - 1;
        for (int t = lid; t < rows * c; t += LS) {
            const int i = k + 1 + t / c, j = k + 1 + t % c;
            AT(a, i, j) -= MUL(AT(a, i, k), AT(a, k, j));
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}

__kernel void getrs1(const int count, const int n, const int nrhs, MAT(t),
                     __global const int *piv, const long piv_off, const long piv_sb, MAT(b))
{
    const long bat = get_global_id(0);
    if (bat >= count)
        return;
    for (int k = 0; k < n; ++k) {
        const int p = piv[piv_off + bat * piv_sb + k];
        if (p != k)
            for (int j = 0; j < nrhs; ++j) {
                const T x = AT(b, k, j);
                AT(b, k, j) = AT(b, p, j);
                AT(b, p, j) = x;
            }
    }
    for (int i = 1; i < n; ++i)
        for (int k = 0; k < i; ++k) {
            const T l = AT(t, i, k);
            for (int j = 0; j < nrhs; ++j)
                AT(b, i, j) -= MUL(l, AT(b, k, j));
        }
    for (int i = n - 1; i >= 0; --i) {
        for (int k = i + 1; k < n; ++k) {
            const T u = AT(t, i, k);
            for (int j = 0; j < nrhs; ++j)
                AT(b, i, j) -= MUL(u, AT(b, k, j));
        }
        const T d = AT(t, i, i);
% if cplx:
        for (int j = 0; j < nrhs; ++j)
            AT(b, i, j) = DIV(AT(b, i, j), d);
% else:
        const T r = 1 / d;
        for (int j = 0; j < nrhs; ++j)
            AT(b, i, j) *= r;
% endif
    }
}

__kernel void getrf1(const int count, const int m, const int n, const int base, MAT(a),
                     __global int *piv, const long piv_off, const long piv_sb,
                     __global int *info)
{
    const long bat = get_global_id(0);
    if (bat >= count)
        return;
    const int kmax = min(m, n);
    for (int k = 0; k < kmax; ++k) {
        R v = -1;
        int p = k;
        for (int i = k; i < m; ++i) {
            const R x = ABS1(AT(a, i, k));
            if (x > v || (x != x && v == v)) {
                v = x;
                p = i;
            }
        }
        piv[piv_off + bat * piv_sb + k] = base + p;
        if (p != k) {
            for (int j = 0; j < n; ++j) {
                const T x = AT(a, k, j);
                AT(a, k, j) = AT(a, p, j);
                AT(a, p, j) = x;
            }
        }
        const T d = AT(a, k, k);
        if (ISZERO(d)) {
            if (info[bat] == 0)
                info[bat] = base + k + 1;
            continue;
        }
        for (int i = k + 1; i < m; ++i) {
            const T l = DIV(AT(a, i, k), d);
            AT(a, i, k) = l;
            for (int j = k + 1; j < n; ++j)
                AT(a, i, j) -= MUL(l, AT(a, k, j));
        }
    }
}

__kernel void laswp(const int rows_base, const int npiv, const int ncols, const int reverse,
                    const int skip0, const int skip1, MAT(a), __global const int *piv,
                    const long piv_off, const long piv_sb)
{
    const long bat = get_global_id(1);
    const int j0 = get_global_id(0);
    if (j0 >= ncols)
        return;
    const int j = j0 < skip0 ? j0 : j0 + (skip1 - skip0);
    for (int s = 0; s < npiv; ++s) {
        const int k = reverse ? npiv - 1 - s : s;
        const int p = piv[piv_off + bat * piv_sb + k] - rows_base;
        if (p != k) {
            const T x = AT(a, k, j);
            AT(a, k, j) = AT(a, p, j);
            AT(a, p, j) = x;
        }
    }
}

% if gpu:
__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void laswp_group(const int rows_base, const int npiv, const int ncols, const int reverse,
                 const int skip0, const int skip1, MAT(a), __global const int *piv,
                 const long piv_off, const long piv_sb)
{
    __local int row[2 * ${swaps}], src[2 * ${swaps}], pv[${swaps}];
    __local T vals[2 * ${swaps} * ${sc}];
    const long bat = get_global_id(1);
    const int lid = get_local_id(0);
    const int col0 = get_group_id(0) * ${sc};
    for (int k = lid; k < npiv; k += LS)
        pv[k] = piv[piv_off + bat * piv_sb + k];
    barrier(CLK_LOCAL_MEM_FENCE);
    const int slots = 2 * npiv;
${swap_moves('npiv', 'rows_base', 'reverse')}\
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = lid; e < slots * ${sc}; e += LS) {
        const int t = e / ${sc}, j0 = col0 + e % ${sc};
        if (row[t] >= 0 && j0 < ncols)
            vals[e] = AT(a, src[t], j0 < skip0 ? j0 : j0 + (skip1 - skip0));
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);  /* (every read before any write) */
    for (int e = lid; e < slots * ${sc}; e += LS) {
        const int t = e / ${sc}, j0 = col0 + e % ${sc};
        if (row[t] >= 0 && j0 < ncols)
            AT(a, row[t], j0 < skip0 ? j0 : j0 + (skip1 - skip0)) = vals[e];
    }
}
% endif

__kernel void pivots_to_perm(const int count, const int n, const int reverse,
                             __global const int *piv, const long piv_off, const long piv_sb,
                             __global int *perm)
{
    /* After swaps k <-> piv[k] in order, position k holds what position piv[k] held before
       swap k: the last earlier swap j bringing something to that position (piv[j] = it)
       took it from position j, and so on back: one backward scan a position. The swaps
       last first give the inverse permutation. */
    const int k = get_global_id(0);
    const long bat = get_global_id(1);
    if (k >= n)
        return;
    __global const int *pv = piv + piv_off + bat * piv_sb;
    int pos = pv[k];
    for (int j = k - 1; j >= 0; --j)
        if (pv[j] == pos)
            pos = j;
    if (reverse)
        perm[bat * n + pos] = k;
    else
        perm[bat * n + k] = pos;
}

__kernel void gather(const int rows, const int cols, const int by_cols, MAT(x),
                     __global const int *perm, const long perm_off, const long perm_sb,
                     MAT(y))
{
    const int j = get_global_id(0), i = get_global_id(1);
    const long bat = get_global_id(2);
    if (j >= cols)
        return;
    const int src = perm[perm_off + bat * perm_sb + (by_cols ? j : i)];
    AT(y, i, j) = by_cols ? AT(x, i, src) : AT(x, src, j);
}

% if gpu:
__kernel void tril_blocks(const int n, const int nb, MAT(a), MAT(d))
{
    /* a's strict upper triangle zeroed, its diagonal blocks' lower triangles from d (rows
       k..k+nb-1 of d hold those of the block at k, nb a multiple, in columns 0..nb-1).
       Work-items over (columns, rows, batch). */
    const int jj = get_global_id(0), i = get_global_id(1);
    const long bat = get_global_id(2);
    if (jj >= n || i >= n)
        return;
    if (jj > i)
        AT(a, i, jj) = FROM_R(0);
    else if (i / nb == jj / nb)
        AT(a, i, jj) = AT(d, i, jj % nb);
}
% endif

__kernel void trsm(const int n, const int nrhs, const int lower, const int unit,
                   const int conj_t, const int ident, MAT(t), MAT(b))
{
    const long bat = get_global_id(1);
    const int j = get_global_id(0);
    if (j >= nrhs)
        return;
    for (int s = 0; s < n; ++s) {
        const int i = lower ? s : n - 1 - s;
        T x = ident ? FROM_R((R)(i == j)) : AT(b, i, j);
        const int k0 = lower ? 0 : i + 1, k1 = lower ? i : n;
        for (int k = k0; k < k1; ++k) {
            const T l = AT(t, i, k);
            x -= MUL(conj_t ? CONJ(l) : l, AT(b, k, j));
        }
        if (!unit) {
            const T d = AT(t, i, i);
            x = DIV(x, conj_t ? CONJ(d) : d);
        }
        AT(b, i, j) = x;
    }
}

## Columns of b for solve_steps: each work-item's rows loaded into registers (bx0...), then
## stored into bs. Needs cx, ry, j, live, n.
<%def name="columns_load(tb, rg)">\
% for u in range(-(-tb // rg)):
        const int brow${u} = ry + ${u * rg};
        const T bx${u} = !live || brow${u} >= n ? FROM_R(0) : AT(b, brow${u}, j);
% endfor
</%def>\
<%def name="columns_store(tb, rg)">\
% for u in range(-(-tb // rg)):
        if (brow${u} < n)
            bs[brow${u}][cx] = bx${u};
% endfor
</%def>\
## The steps of potrf_panel's triangular solve b = t^-1 b: bs holds rows
## 0..n-1 of b's columns (rg work-items a column: work-item (cx, ry) owns rows ry + rg u of
## column cx, up to tb rows); tri(q, k) the triangle's element (q, k) in packed order
## (reversed for upper), dinv its diagonal's inverses; the solution is stored into b.
<%def name="solve_steps(tri, dinv, tb, rg)">\
    /* in packed (reversed for upper) order: rows q > k depend on row k */
    for (int k0 = 0; k0 < n; k0 += KB) {
% for c in range(kb):
        T y${c} = FROM_R(0);
        if (k0 + ${c} < n) {
            const int kr = lower ? k0 + ${c} : n - 1 - k0 - ${c};
            T x = bs[kr][cx];
%   for c2 in range(c):
            x -= MUL(${tri('k0 + %d' % c, 'k0 + %d' % c2)}, y${c2});
%   endfor
            y${c} = MUL(x, ${dinv}[k0 + ${c}]);
            if (live && ry == kr % ${rg})
                AT(b, kr, j) = y${c};
        }
% endfor
% for u in range(-(-tb // rg)):
        {  /* row sr = ry + ${u} x ${rg}, solved after this step's rows */
            const int sr = ry + ${u * rg};
            const int q = lower ? sr : n - 1 - sr;
            if (q >= k0 + KB && q < n) {
                T x = bs[sr][cx];
%   for c in range(kb):
                x -= MUL(${tri('q', 'k0 + %d' % c)}, y${c});
%   endfor
                bs[sr][cx] = x;
            }
        }
% endfor
        barrier(CLK_LOCAL_MEM_FENCE);
    }
</%def>\
% if gpu:
<%
    rg = max(1, ls // cb)  # work-items a column of b
    steps = -(-tb // kb)
    # the triangle by steps: step s's slab holds rows s kb .. tb - 1 of its kb columns
    slab = lambda s: kb * (s * tb - kb * s * (s - 1) // 2)
    vt = R + str(kb) if not cplx and kb in (2, 4, 8, 16) else None  # a slab's row: one load
    assert rg % kb == 0, (rg, kb)
%>\
## Declares name0 .. name{kb-1}: the kb entries of a row of a slab from element `at` of tq
## (of vector type vt, or None).
<%def name="slab_row(name, at, vt)">\
% if vt:
        const ${vt} ${name} = tq[(${at}) / KB];
% for c in range(kb):
        const T ${name}${c} = ${name}.s${'%x' % c};
% endfor
% else:
% for c in range(kb):
        const T ${name}${c} = tq[${at} + ${c}];
% endfor
% endif
</%def>\
__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void trsm_tile(const int n, const int nrhs, const int lower, const int unit, const int conj_t,
               const int ident, MAT(t), MAT(b), const int use_dg, __global const T *dg,
               const long dg_off, const long dg_sb)
{
    /* Positions count rows in solve order (reversed for an upper t). Work-item (cx, ry)
       holds positions ry + RG u of column cx in registers (x0, x1, ...). The triangle sits
       in local memory by steps of KB columns (slabs, a row's KB entries side by side), the
       diagonal's inverses in place of the diagonal. A step: every work-item solves the
       step's KB rows (their values in xs, from their owners) and takes them out of its
       later rows; the next step's owners put theirs in xs. One barrier a step. */
    __local ${vt or 'T'} tq[${slab(steps) // kb if vt else slab(steps)}];
    __local T xs[2][KB][CB];
    __local T *const ts = (__local T *)tq;
    const long bat = get_group_id(1);
    const int lid = get_local_id(0);
    const int cx = lid % CB, ry = lid / CB;
    const int j = get_group_id(0) * CB + cx;
    const int live = j < nrhs;
% for u in range(-(-tb // rg)):
    const int brow${u} = lower ? ry + ${u * rg} : n - 1 - ry - ${u * rg};
    T x${u} = !live || ry + ${u * rg} >= n ? FROM_R(0) : ident ? FROM_R((R)(brow${u} == j)) :
              AT(b, brow${u}, j);
% endfor
    /* element (pq, pk) of the triangle, in positions; zero past n and above the diagonal */
% for e in range(-(-tb * tb // ls)):
    const int pq${e} = (lid + ${e * ls}) / TB, pk${e} = (lid + ${e * ls}) % TB;
    const int in${e} = pq${e} < n && pk${e} <= pq${e};
    const T t${e} = in${e} ? AT(t, lower ? pq${e} : n - 1 - pq${e}, lower ? pk${e} : n - 1 - pk${e})
                        : FROM_R(0);
% endfor
% for e in range(-(-tb * tb // ls)):
    if (pq${e} < TB && pk${e} / KB * KB <= pq${e}) {  /* a slab's slot */
        const int s = pk${e} / KB;
        T v = conj_t ? CONJ(t${e}) : t${e};
        if (pq${e} == pk${e})
            v = pq${e} >= n ? FROM_R(0) :
                use_dg ? dg[dg_off + bat * dg_sb + (lower ? pq${e} : n - 1 - pq${e})] :
                unit ? FROM_R(1) : DIV(FROM_R(1), v);
        ts[KB * (s * TB - KB * s * (s - 1) / 2) + (pq${e} - s * KB) * KB + pk${e} % KB] = v;
    }
% endfor
    if (ry < KB)
        xs[0][ry][cx] = x0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k0 = 0, s = 0; k0 < n; k0 += KB, ++s) {
        const int base = KB * (s * TB - KB * s * (s - 1) / 2);
% for c in range(kb):
${slab_row('d%d_' % c, 'base + %d' % (c * kb), vt)}\
% endfor
% for c in range(kb):
        T y${c} = xs[s & 1][${c}][cx];
%   for c2 in range(c):
        y${c} -= MUL(d${c}_${c2}, y${c2});
%   endfor
        y${c} = MUL(y${c}, d${c}_${c});
% endfor
        {  /* the owner stores its solved row */
            const int c = ry - k0 % RG;
            if (live && c >= 0 && c < KB && k0 + c < n)
                AT(b, lower ? k0 + c : n - 1 - k0 - c, j) =
                    ${' : '.join('c == %d ? y%d' % (c, c) for c in range(kb - 1))} : y${kb - 1};
        }
% for u in range(-(-tb // rg)):
        if (${u * rg + rg - 1} >= k0 + KB) {  /* rows past the step (the solved ones: unread) */
${slab_row('r%d_' % u, 'base + (ry + %d - k0) * KB' % (u * rg), vt)}\
            x${u} -= ${' + '.join('MUL(r%d_%d, y%d)' % (u, c, c) for c in range(kb))};
        }
% endfor
        {  /* the next step's rows into xs */
            const int c = ry - (k0 + KB) % RG, un = (k0 + KB) / RG;
            if (c >= 0 && c < KB)
<% last = -(-tb // rg) - 1 %>\
                xs[(s + 1) & 1][c][cx] =
                    ${' : '.join('un == %d ? x%d' % (u, u) for u in range(last))} : x${last};
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
% endif

% if gpu:
__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void potrf_panel(const int n, const int m, const int base, MAT(a), MAT(l), MAT(b),
                 __global int *info)
{
    /* Every work-group factors the diagonal block a as potrf_leaf (work-group 0 stores the
       factor into l, which is not a: the others may still be reading a) and solves PC of
       b's columns as trsm_tile with conj(L) from s; the columns' loads are in flight
       during the factorization. */
    __local T s[NB][NB + 1];
    __local T bs[NB][PC + 1];
    __local R dg[NB];
    __local T rdg[NB];
    const long bat = get_group_id(1);
    const int lid = get_local_id(0);
    const int jc = lid % NB, i0 = lid / NB;
    const int mine = jc < n;
    const int cx = lid % PC, ry = lid / PC;
    const int j = get_group_id(0) * PC + cx;
    const int live = j < m, lower = 1;
${columns_load(nb, max(1, ls // pc))}\
${chol_in_local('get_group_id(0) == 0')}\
${columns_store(nb, max(1, ls // pc))}\
    if (lid < n)
        rdg[lid] = FROM_R(1 / dg[lid]);
    barrier(CLK_LOCAL_MEM_FENCE);
${solve_steps(lambda q, k: 'CONJ(s[%s][%s])' % (q, k), 'rdg', nb, max(1, ls // pc))}\
}
% endif

__kernel void syevj1(const int count, const int n, const int upper, MAT(a), MAT(v),
                     __global R *w, const long w_off, const long w_sb)
{
    const long bat = get_global_id(0);
    if (bat >= count)
        return;
    R frob = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < i; ++j) {
            const T x = upper ? CONJ(AT(a, j, i)) : AT(a, i, j);
            AT(a, i, j) = x;
            AT(a, j, i) = CONJ(x);
            frob += 2 * RE(MUL(x, CONJ(x)));
        }
        const R d = RE(AT(a, i, i));
        AT(a, i, i) = FROM_R(d);
        frob += d * d;
        for (int j = 0; j < n; ++j)
            AT(v, i, j) = FROM_R((R)(i == j));
    }
    /* a rotation is skipped where |a_pq| is below eps of sqrt(|a_pp a_qq|) (or of ||A||):
       rotations by rounding-level angles would only erode the vectors' orthogonality */
    const R floor = EPS * EPS * sqrt(frob);
    int rotated = 1;
    for (int sweep = 0; sweep < 40 && rotated; ++sweep) {
        rotated = 0;
        for (int p = 0; p < n - 1; ++p)
            for (int q = p + 1; q < n; ++q) {
                const T apq = AT(a, p, q);
                const R g = sqrt(RE(MUL(apq, CONJ(apq))));
                const R alpha = RE(AT(a, p, p)), beta = RE(AT(a, q, q));
                if (g <= EPS * sqrt(fabs(alpha * beta)) || g <= floor)
                    continue;
                rotated = 1;
                const T e = apq / g, ce = CONJ(e);
                const R theta = (beta - alpha) / (2 * g);
                R t = 1 / (fabs(theta) + sqrt(theta * theta + 1));
                if (theta < 0)
                    t = -t;
                const R c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; ++k) {  /* A J and V J */
                    const T akp = AT(a, k, p), akq = MUL(ce, AT(a, k, q));
                    AT(a, k, p) = c * akp - s * akq;
                    AT(a, k, q) = s * akp + c * akq;
                    const T vkp = AT(v, k, p), vkq = MUL(ce, AT(v, k, q));
                    AT(v, k, p) = c * vkp - s * vkq;
                    AT(v, k, q) = s * vkp + c * vkq;
                }
                for (int k = 0; k < n; ++k) {  /* J^H (A J) */
                    const T apk = AT(a, p, k), aqk = MUL(e, AT(a, q, k));
                    AT(a, p, k) = c * apk - s * aqk;
                    AT(a, q, k) = s * apk + c * aqk;
                }
                AT(a, p, p) = FROM_R(alpha - t * g);
                AT(a, q, q) = FROM_R(beta + t * g);
                AT(a, p, q) = FROM_R(0);
                AT(a, q, p) = FROM_R(0);
            }
    }
    for (int i = 0; i < n; ++i) {  /* ascending, the vectors with them */
        int m = i;
        for (int j = i + 1; j < n; ++j)
            if (RE(AT(a, j, j)) < RE(AT(a, m, m)))
                m = j;
        if (m != i) {
            const T x = AT(a, i, i);
            AT(a, i, i) = AT(a, m, m);
            AT(a, m, m) = x;
            for (int k = 0; k < n; ++k) {
                const T y = AT(v, k, i);
                AT(v, k, i) = AT(v, k, m);
                AT(v, k, m) = y;
            }
        }
        w[w_off + bat * w_sb + i] = RE(AT(a, i, i));
    }
}
% elif part == 'getri_gj':
#define NM ${nm}
#define G (LS / NM)
<% U = '\n#pragma unroll' if unroll else '' %>\
<%def name="rows_in(src, dst, cols)">\
## the matrices' rows into registers dst[NM] (`cols` columns; the rest 0) through local
## memory, a row of each at a time (work-items along the row: coalesced)
    for (int r = 0; r < n; ++r)
        if (live && i < ${cols})
            tile[m][r][i] = AT(${src}, r, i);
    barrier(CLK_LOCAL_MEM_FENCE);${U}
    for (int j = 0; j < NM; ++j)
        ${dst}[j] = mine && j < ${cols} ? tile[m][i][j] : FROM_R(0);
    barrier(CLK_LOCAL_MEM_FENCE);
</%def>\

__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
% if solve:
void gesv_gj(const int count, const int n, const int nrhs, MAT(a), MAT(b), MAT(x),
             __global int *info)
% else:
void getri_gj(const int count, const int n, MAT(a), MAT(x), __global int *info)
% endif
{
    /* Gauss-Jordan with partial pivoting: work-item i of a matrix's NM holds row i in s
       (and, solving, row i of b in u). The rows are never swapped: each pivot row is
       remembered (order) and the result unscrambled as it is stored. The pivots are
       getrf's (the first largest |re| + |im| among the rows not yet pivoted), found by the
       same operations, so a zero pivot is flagged where getrf would flag it.
       getri_gj: in place, slot k of a row holds column k of the reduced matrix before step
       k and, after it, column order[k] of the inverse's accumulator.
       gesv_gj: row i of the solution is u of the row that pivoted at step i. */
    __local T tile[G][NM][NM + 1];
    __local R cand[G][NM];
    __local T prow[G][NM];
% if solve:
    __local T prowb[G][NM];
% endif
    __local int order[G][NM];  /* order[m][k]: the row that pivoted at step k */
    const int lid = get_local_id(0);
    const int m = lid / NM, i = lid % NM;
    const long bat = (long)get_group_id(0) * G + m;
    const int live = bat < count, mine = live && i < n;  /* a row of a matrix */
    T s[NM];
${rows_in('a', 's', 'n')}\
% if solve:
    T u[NM];
${rows_in('b', 'u', 'nrhs')}\
% endif
    int pivoted = !mine, step = 0, zero = 0;
    /* NM steps, the ones past n doing nothing: no barrier under a condition */${U}
    for (int k = 0; k < NM; ++k) {
        cand[m][i] = pivoted ? -1 : ABS1(s[k]);
        barrier(CLK_LOCAL_MEM_FENCE);
        int p = -1;
        R best = -1;${U}
        for (int r = 0; r < NM; ++r) {  /* as idamax: a NaN first stays, later ones lose */
            const R c = cand[m][r];
            if (c != -1 && (p < 0 || c > best)) {
                best = c;
                p = r;
            }
        }
        const int step_live = k < n && p >= 0;
        if (step_live && best == 0 && !zero)
            zero = k + 1;
        if (step_live && i == p) {${U}
            for (int j = 0; j < NM; ++j) {
                prow[m][j] = s[j];
% if solve:
                prowb[m][j] = u[j];
% endif
            }
            order[m][k] = i;
            pivoted = 1;
            step = k;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (step_live && mine) {
            const T rp = DIV(FROM_R(1), prow[m][k]);
            if (i == p) {${U}
                for (int j = 0; j < NM; ++j) {
                    s[j] = j == k ? rp : MUL(s[j], rp);
% if solve:
                    u[j] = MUL(u[j], rp);
% endif
                }
            } else {
                const T f = MUL(s[k], rp);${U}
                for (int j = 0; j < NM; ++j) {
                    s[j] = j == k ? -f : s[j] - MUL(f, prow[m][j]);
% if solve:
                    u[j] -= MUL(f, prowb[m][j]);
% endif
                }
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
% if solve:
    /* row `step` of the solution is row i's u */
    if (mine)${U}
        for (int j = 0; j < NM; ++j)
            if (j < nrhs)
                tile[m][step][j] = u[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < n; ++r)
        if (live && i < nrhs)
            AT(x, r, i) = tile[m][r][i];
% else:
    /* row `step` of the inverse is row i's slots, slot j in column order[m][j] */
    if (mine)${U}
        for (int j = 0; j < NM; ++j)
            if (j < n)
                tile[m][step][order[m][j]] = s[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < n; ++r)
        if (mine)
            AT(x, r, i) = tile[m][r][i];
% endif
    if (mine && i == 0 && zero)
        info[bat] = zero;
}
% elif part == 'sytrd_grid':
#define MC ${mc}
#define ROWS ${rows}
#define RCH ${rch}
#define NSEG (LS / RCH)
#define RB ${rb}

/* The sum over the work-group of each work-item's x (every work-item gets it); buf: LS + NSEG
   elements, sum's order fixed (each group of a grid kernel adds the same bits). */
inline T group_sum(T x, __local T *buf, const int lid)
{
    buf[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < NSEG) {
        T t = buf[lid * RCH];
        for (int u = 1; u < RCH; ++u)
            t += buf[lid * RCH + u];
        buf[LS + lid] = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    T t = buf[LS];
    for (int u = 1; u < NSEG; ++u)
        t += buf[LS + u];
    barrier(CLK_LOCAL_MEM_FENCE);
    return t;
}

__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void sytrd_grid(const int n, MAT(a), __global R *d, __global R *e, __global T *tau,
                __global T *vt, __global volatile int *ints, __global volatile T *pv,
                __global volatile T *kv, __global int *info)
{
    /* LAPACK's hetd2 (lower) on the full Hermitian n x n matrix a: Q^H A Q = tridiagonal
       (d, e), Q = H0 H1 ... H(n-2), H_s = I - tau_s v_s v_s^H, v_s the row s of vt (zero up
       to s, one at s + 1). Work-group g owns rows g, g + G, ...; work-item lid columns lid +
       LS m (m < MC), whose v, w and next v it keeps in registers. Step s (row s): w from
       the previous step's p = A v (every group's rows, in global memory) and the groups'
       partial v^H p; row s's entries after the previous step's update (it is never
       updated in memory past it), so d_s and the next reflector's x; the reflector (larfg),
       by every group alike; then one pass over the group's rows past s: the update A -= v
       w^H + w v^H and the next p = A v with the new v; the partial sums published, one
       barrier between the groups a step (ints[0]). */
    __local T buf[${max(rch * ls, ls + ls // rch)}];
    __local T rv[ROWS], rw[ROWS], rn[ROWS], pr[ROWS];
    __local T x1;
    __local int fail;
    const long bat = 0;
    const int lid = get_local_id(0), g = get_group_id(0), G = get_num_groups(0);
    __global volatile T *av = a;
    T v[MC], w[MC], vn[MC];
#pragma unroll
    for (int m = 0; m < MC; ++m)
        v[m] = w[m] = FROM_R(0);
    T ts = FROM_R(0);  /* the previous reflector's tau */
    if (lid == 0)
        fail = 0;
    for (int s = 0; s < n; ++s) {
        const int par = s & 1;
        T ws = FROM_R(0);  /* w_s */
        /* (every barrier unconditional: PoCL miscompiles barriers under a condition) */
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (s > 0 && lid == 0 && !fail && grid_poll(&ints[0], G * s)) {
            fail = 1;
            info[0] = -1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* every load of the step's inputs in flight at once: the partial sums, p, row s */
        const T kpart = s > 0 && lid < G && !fail ? kv[(par ^ 1) * G + lid] : FROM_R(0);
        T x[MC];
#pragma unroll
        for (int m = 0; m < MC; ++m) {
            const int c = lid + LS * m;
            w[m] = s > 0 && c >= s && c < n ? pv[(par ^ 1) * n + c] : FROM_R(0);
            x[m] = c > s && c < n ? CONJ(av[a_off + (long)s * a_sr + (long)c * a_sc])
                                  : FROM_R(0);
        }
        const T ps = s > 0 ? pv[(par ^ 1) * n + s] : FROM_R(0);
        const R ass = RE(av[a_off + (long)s * a_sr + (long)s * a_sc]);
        const T k = group_sum(kpart, buf, lid);
        if (s > 0) {
            /* hetd2: w = tau p + alpha v, alpha = -tau conj(tau v^H p) / 2 */
            const T alpha = -MUL(ts, CONJ(MUL(ts, k))) / (R)2;
#pragma unroll
            for (int m = 0; m < MC; ++m)
                w[m] = MUL(ts, w[m]) + MUL(alpha, v[m]);
            ws = MUL(ts, ps) + alpha;
        }
        /* row s after the last update: d_s and x (columns past s) */
        const R ds = ass - 2 * RE(ws);
        if (g == 0 && lid == 0)
            d[s] = ds;
        if (s == n - 1)
            break;
        R sq = 0;
#pragma unroll
        for (int m = 0; m < MC; ++m) {
            const int c = lid + LS * m;
            x[m] -= c > s && c < n ? MUL(v[m], CONJ(ws)) + w[m] : FROM_R(0);
            if (c == s + 1)
                x1 = x[m];
            else
                sq += RE(MUL(CONJ(x[m]), x[m]));
        }
        /* larfg: H^H (x1; x) = (beta; 0) */
        const R xn2 = RE(group_sum(FROM_R(sq), buf, lid));
        const T alpha = x1;
        T tv = FROM_R(0), scale = FROM_R(0);
        R beta = RE(alpha);
        if (xn2 != 0${' || IM(alpha) != 0' if cplx else ''}) {
            beta = -copysign(sqrt(RE(alpha) * RE(alpha) + IM(alpha) * IM(alpha) + xn2),
                             RE(alpha));
% if cplx:
            tv = (T)((beta - RE(alpha)) / beta, -IM(alpha) / beta);
% else:
            tv = (beta - alpha) / beta;
% endif
            scale = DIV(FROM_R(1), alpha - FROM_R(beta));
        }
        if (g == 0 && lid == 0) {
            e[s] = beta;
            tau[s] = tv;
        }
#pragma unroll
        for (int m = 0; m < MC; ++m) {
            const int c = lid + LS * m;
            vn[m] = c == s + 1 ? FROM_R(1) : c > s + 1 ? MUL(x[m], scale) : FROM_R(0);
            if (g == s % G && c < n)
                vt[(long)s * n + c] = vn[m];
            if (c < n && c % G == g && c / G < ROWS) {  /* an own row's v, w and new v */
                rv[c / G] = v[m];
                rw[c / G] = w[m];
                rn[c / G] = vn[m];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the pass over the group's rows past s, RCH rows at a time, RB rows' loads in
           flight at once (each store could alias a later load: the compiler keeps them in
           order, so a row at a time would wait for L2 a row) */
        for (int q0 = 0; q0 < ROWS; q0 += RCH) {
            for (int q1 = 0; q1 < RCH; q1 += RB) {
                T y[RB][MC];
#pragma unroll
                for (int q = 0; q < RB; ++q) {
                    const int r = g + G * (q0 + q1 + q);
#pragma unroll
                    for (int m = 0; m < MC; ++m) {
                        const int c = lid + LS * m;
                        y[q][m] = r > s && r < n && c > s && c < n && !fail ? AT(a, r, c)
                                                                            : FROM_R(0);
                    }
                }
#pragma unroll
                for (int q = 0; q < RB; ++q) {
                    const int r = g + G * (q0 + q1 + q);
                    const T vr = rv[q0 + q1 + q], wr = rw[q0 + q1 + q];
                    T acc = FROM_R(0);
#pragma unroll
                    for (int m = 0; m < MC; ++m) {
                        const int c = lid + LS * m;
                        if (s > 0 && r > s && r < n && c > s && c < n && !fail) {
                            y[q][m] -= MUL(vr, CONJ(w[m])) + MUL(wr, CONJ(v[m]));
                            AT(a, r, c) = y[q][m];
                        }
                        acc += MUL(y[q][m], vn[m]);
                    }
                    buf[(q1 + q) * LS + lid] = acc;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            /* row q's LS partial sums: NSEG segments of RCH, then the segments */
            {
                const int q = lid / NSEG, sg = lid % NSEG;
                T t = buf[q * LS + sg * RCH];
                for (int u = 1; u < RCH; ++u)
                    t += buf[q * LS + sg * RCH + u];
                barrier(CLK_LOCAL_MEM_FENCE);
                buf[q * NSEG + sg] = t;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < RCH) {
                T t = buf[lid * NSEG];
                for (int u = 1; u < NSEG; ++u)
                    t += buf[lid * NSEG + u];
                pr[q0 + lid] = t;
                const int r = g + G * (q0 + lid);
                if (r > s && r < n)
                    pv[par * n + r] = t;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) {  /* this group's part of v^H p */
            T t = FROM_R(0);
            for (int q = 0; q < ROWS; ++q)
                if (g + G * q > s && g + G * q < n)
                    t += MUL(CONJ(rn[q]), pr[q]);
            kv[par * G + g] = t;
        }
#pragma unroll
        for (int m = 0; m < MC; ++m)
            v[m] = vn[m];
        ts = tv;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0)
            release_add(&ints[0]);
    }
}
% elif part == 'trsm_grid':
#define NB ${pw}
#define RC ${rc}
#define LC ${lc}
#define AT3(name, q, i, j) name[name##_off + (long)(q) * name##_sb + (long)(i) * name##_sr \
                                + (long)(j) * name##_sc]

<% outs, loads, chunks = -(-pw * rc // ls), -(-pw * lc // ls), -(-pw // lc) %>\
<%def name="block_load(a, qa, a0, c0, an, kn, y)">\
## y<c>_<q>: the block of a at (a0, c0) (an rows, kn columns; zeros past them), a chunk of LC
## columns (c) as block_product takes it through ts, loaded into registers
% for c in range(chunks):
% for q in range(loads):
        const T ${y}${c}_${q} = lid + ${q * ls} < NB * LC && (lid + ${q * ls}) / LC < ${an}
            && ${c * lc} + (lid + ${q * ls}) % LC < ${kn} ? AT3(${a}, ${qa}, ${a0} +
            (lid + ${q * ls}) / LC, ${c0} + ${c * lc} + (lid + ${q * ls}) % LC) : FROM_R(0);
% endfor
% endfor
</%def>\
<%def name="block_product(y, v)">\
## acc_q += the product of block_load's block y and the rows of v (local, NB x r; zeros past
## the block's columns) for this work-item's outputs e = lid + q LS < NB r (column e % r)
% for c in range(chunks):
        barrier(CLK_LOCAL_MEM_FENCE);
% for q in range(loads):
        if (lid + ${q * ls} < NB * LC)
            ts[(lid + ${q * ls}) / LC][(lid + ${q * ls}) % LC] = ${y}${c}_${q};
% endfor
        barrier(CLK_LOCAL_MEM_FENCE);
% for q in range(outs):
        if (lid + ${q * ls} < NB * r) {
            /* (unrolled: the local loads issued together, not one round trip each) */
#pragma unroll
            for (int l = 0; l < LC; ++l)
                acc${q} += MUL(ts[(lid + ${q * ls}) / r][l],
                               ${v}[${c * lc} + l][(lid + ${q * ls}) % r]);
        }
% endfor
% endfor
</%def>\

__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void trsm_grid(const int n, const int r, const int lower, const int at, MAT(t), MAT(dinv),
               MAT(b), MAT(x), __global volatile int *ints, __global int *info)
{
    /* x = t^-1 b (t: n x n lower or upper triangular, b and x: n x r, r <= RC) by blocks of
       NB rows, left-looking: dinv[q] = the inverse of t's diagonal block q. The block of
       step s (in the direction of the solve) belongs to work-group s mod G, which sums
       t_kj x_j over the blocks j of earlier steps, each as soon as its flag ints[at + j] is
       set (x_j written), then writes x_k = dinv[k] (b_k - that sum) and sets its own flag:
       the groups wait only for the block they need next, not for each other at every step.
       Blocks of t pass through local memory LC columns at a time. A wait that gives up
       (the groups did not all run at once) sets info[0] = -1; the groups then run on
       without work (every barrier reached by all, none under a condition, which PoCL
       miscompiles). */
    /* (ts's rows a word longer, so that a row each work-item (one right-hand side) falls
       on banks apart: 64 words a row put all of a warp's reads in one bank) */
    __local T xs[NB][RC], ts[NB][LC + 1];
    __local int fail;
    const int lid = get_local_id(0), g = get_group_id(0), G = get_num_groups(0);
    const int nblk = (n + NB - 1) / NB;
    __global volatile T *xv = x;
    if (lid == 0)
        fail = 0;
    for (int s = g; s < nblk; s += G) {
        const int k = lower ? s : nblk - 1 - s, k0 = k * NB;
        barrier(CLK_LOCAL_MEM_FENCE);
        const int kr = fail ? 0 : min(NB, n - k0);
% for q in range(outs):
        T acc${q} = FROM_R(0);
% endfor
        /* what does not depend on x (b_k, dinv[k], each t_kj) loaded before the waits */
% for q in range(outs):
        const int e${q} = lid + ${q * ls};
        const T bk${q} = e${q} < NB * r && e${q} / r < kr ?
            b[b_off + (long)(k0 + e${q} / r) * b_sr + (long)(e${q} % r) * b_sc] : FROM_R(0);
% endfor
${block_load('dinv', 'k', '0', '0', 'kr', 'kr', 'd')}\
        for (int s2 = 0; s2 < s; ++s2) {
            const int j = lower ? s2 : nblk - 1 - s2, j0 = j * NB;
            const int kn = min(NB, n - j0);  /* (the columns of t_kj) */
${block_load('t', '0', 'k0', 'j0', 'kr', 'kn', 't')}\
            if (lid == 0 && !fail) {
                int spins = 0;
                while (acquire_load(&ints[at + j]) == 0 && ++spins < SPIN_MAX)
                    ;
                if (spins >= SPIN_MAX) {
                    fail = 1;
                    info[0] = -1;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
            const int xn = fail ? 0 : kn;
% for q in range(outs):
            const T z${q} = e${q} < NB * r && e${q} / r < xn ?
                xv[x_off + (long)(j0 + e${q} / r) * x_sr + (long)(e${q} % r) * x_sc] : FROM_R(0);
% endfor
% for q in range(outs):
            if (e${q} < NB * r)
                xs[e${q} / r][e${q} % r] = z${q};
% endfor
${block_product('t', 'xs')}\
        }
        /* b_k - the sum (zeros past the block's rows: 0 * garbage is NaN), then x_k =
           dinv[k] times it */
        barrier(CLK_LOCAL_MEM_FENCE);
% for q in range(outs):
        if (e${q} < NB * r)
            xs[e${q} / r][e${q} % r] = e${q} / r < kr ? bk${q} - acc${q} : FROM_R(0);
        acc${q} = FROM_R(0);
% endfor
${block_product('d', 'xs')}\
% for q in range(outs):
        if (e${q} < kr * r)
            x[x_off + (long)(k0 + e${q} / r) * x_sr + (long)(e${q} % r) * x_sc] = acc${q};
% endfor
        /* the work-group's writes of x_k, seen by work-item 0 at the barrier, released to
           the device with the flag */
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0 && !fail)
            release_add(&ints[at + k]);
    }
}

% elif part == 'geqrf_grid':
#define RW ${rw}
#define PW ${pw}
#define LANES (LS / PW)

__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void geqrf_grid(const int m, const int w, const int want_vh, const int at, MAT(a), MAT(vb),
                MAT(vh), __global T *tau, const long tau_off, const long tau_sb,
                __global volatile int *ints, __global volatile T *xs, __global int *info)
{
    /* geqrf_panel's result for one m x w panel (w <= PW), its rows spread over work-groups
       as getrf_grid's (g holds rows g RW .. g RW + RW - 1 in local memory; work-item lid
       column lid % PW of rows lid / PW + q LANES). Per column k, one sum over all rows
       below the diagonal: |x|^2 and x^H a_j (j > k): each group's partial sums and row k
       (by its owner) go to global memory, the groups meet at a barrier (ints[at]), each
       adds the partial sums in the same order, forms the reflector (LAPACK's larfg) and
       applies it to its rows. Partial sums double-buffered by k's parity (as getrf_grid's
       candidates). */
    __local T tile[RW][PW];
    __local T part[LANES][PW];
    __local T sum[PW], krow[PW];
    __local int fail;
    const long bat = 0;
    const int lid = get_local_id(0), g = get_group_id(0), G = get_num_groups(0);
    const int j = lid % PW, lane = lid / PW;
    const int r0 = g * RW, nr = min(RW, m - r0);
    __global volatile T *parts = xs;  /* [2][G][PW] */
    __global volatile T *krows = xs + 2 * G * PW;  /* [2][PW] */
    for (int e = lid; e < nr * w; e += LS)
        tile[e / w][e % w] = AT(a, r0 + e / w, e % w);
    if (lid == 0)
        fail = 0;
    for (int k = 0; k < w; ++k) {
        const int par = k & 1;
        const int lo = max(k + 1 - r0, 0), first = lo + (lane - lo % LANES + LANES) % LANES;
        barrier(CLK_LOCAL_MEM_FENCE);
        T s = FROM_R(0);
        if (!fail && j >= k && j < w)
            for (int i = first; i < nr; i += LANES) {
                const T x = tile[i][k];
                s += j == k ? FROM_R(RE(MUL(CONJ(x), x))) : MUL(CONJ(x), tile[i][j]);
            }
        part[lane][j] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < w) {
            T t = part[0][lid];
            for (int l = 1; l < LANES; ++l)
                t += part[l][lid];
            parts[(par * G + g) * PW + lid] = t;
            if (k >= r0 && k < r0 + nr)
                krows[par * PW + lid] = tile[k - r0][lid];
        }
        /* (every barrier unconditional: PoCL miscompiles barriers under a condition) */
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0 && !fail && grid_wait(&ints[at], G * (k + 1))) {
            fail = 1;
            info[0] = -1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the sums: work-item (j, lane) adds groups lane, lane + LANES, ... (eight loads
           in flight at a time), then the lanes' in lane order */
        s = FROM_R(0);
        if (j >= k && j < w)
            for (int q0 = lane; q0 < G; q0 += 8 * LANES) {
                T y[8];
% for u in range(8):
                y[${u}] = q0 + ${u * ls // pw} < G ? parts[(par * G + q0 + ${u * ls // pw}) * PW + j] : FROM_R(0);
% endfor
% for u in range(8):
                s += y[${u}];
% endfor
            }
        part[lane][j] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < w) {
            T t = part[0][lid];
            for (int l = 1; l < LANES; ++l)
                t += part[l][lid];
            sum[lid] = t;
            krow[lid] = krows[par * PW + lid];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* LAPACK's larfg, in every work-item (as geqrf_panel's) */
        const R xn2 = RE(sum[k]);
        const T alpha = krow[k];
        T tv = FROM_R(0), scale = FROM_R(0);
        R beta = RE(alpha);
        if (xn2 != 0${' || IM(alpha) != 0' if cplx else ''}) {
            beta = -copysign(sqrt(RE(alpha) * RE(alpha) + IM(alpha) * IM(alpha) + xn2),
                             RE(alpha));
% if cplx:
            tv = (T)((beta - RE(alpha)) / beta, -IM(alpha) / beta);
% else:
            tv = (beta - alpha) / beta;
% endif
            scale = DIV(FROM_R(1), alpha - FROM_R(beta));
        }
        const T f = j > k && j < w ? MUL(CONJ(tv), krow[j] + MUL(CONJ(scale), sum[j]))
                                   : FROM_R(0);
        if (!fail) {
            for (int i = lo + lid; i < nr; i += LS)
                tile[i][k] = MUL(tile[i][k], scale);
            if (lane == 0 && k >= r0 && k < r0 + nr && j >= k && j < w)
                tile[k - r0][j] = j == k ? FROM_R(beta) : tile[k - r0][j] - f;
            if (g == 0 && lid == 0)
                tau[tau_off + k] = tv;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!fail && j > k && j < w)
            for (int i = first; i < nr; i += LANES)
                tile[i][j] -= MUL(tile[i][k], f);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* R and V into a, V (explicit) into vb (and V^H into vh) */
    for (int e = lid; e < nr * w && !fail; e += LS) {
        const int i = e / w, c = e % w, r = r0 + i;
        const T x = r > c ? tile[i][c] : FROM_R((R)(r == c));
        AT(a, r, c) = tile[i][c];
        AT(vb, r, c) = x;
        if (want_vh)
            AT(vh, c, r) = CONJ(x);
    }
}

% else:
#define RPT ${rpt}
#define LW ${lw}
#define PW ${pw}
#define CH ${ch}
#define VL (LW * CH)
#define SUB (LS / 8)
<%def name="column_loop()">\
## The columns c of a block. GPUs: unrolled (register arrays need literal indices), and no
## barrier under a condition (a column past the block runs its barriers with live = 0);
## PoCL: a loop left by break (its compiler takes minutes over the barriers unrolled, and
## miscompiles barriers under if (c < bw)).
% if unroll:
#pragma unroll
        for (int c = 0; c < LW; ++c) {
            const int live = c < bw;
% else:
        for (int c = 0; c < LW; ++c) {
            if (c >= bw)
                break;
            const int live = c < bw;  /* (1: not a literal, which compilers warn about) */
% endif
</%def>\

% if part in ('getrf_panel', 'getrf_grid'):
/* (v1, r1) is the better pivot candidate than (v2, r2): larger, then the lower row */
#define BETTER(v1, r1, v2, r2) ((v1) > (v2) || ((v1) == (v2) && (r1) < (r2)))

/* The row of the best of n pivot candidates (value rv[i], row ri[i], i < n <= LS): rounds
   of eight between (rv, ri) and (rv2, ri2). */
inline int best8(__local R *rv, __local int *ri, __local R *rv2, __local int *ri2,
                 const int n)
{
    const int lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = n; s > 1; s = (s + 7) / 8) {
        const int h = (s + 7) / 8;
        if (lid < h) {
            R bv = rv[lid];
            int br = ri[lid];
            for (int i = 1; i < 8; ++i) {
                const int o = lid + h * i;
                if (o < s && BETTER(rv[o], ri[o], bv, br)) {
                    bv = rv[o];
                    br = ri[o];
                }
            }
            rv2[lid] = bv;
            ri2[lid] = br;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        __local R *tv = rv;
        rv = rv2;
        rv2 = tv;
        __local int *ti = ri;
        ri = ri2;
        ri2 = ti;
    }
    return ri[0];
}

% if part == 'getrf_panel':
__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void getrf_panel(const int m, const int w, const int base, MAT(a), __global int *piv,
                 const long piv_off, const long piv_sb, __global int *info)
{
    /* Work-item lid holds rows lid + q LS (q < RPT) of LW columns (a block) in v. Per
       column: the pivot (one reduction), the swap within the block, the rank-1 update in
       registers. Per block: the block's swaps for the other columns (in local memory, sw),
       U12 of the block's rows, then the rows below: A22 -= L21 U12, L21 from registers. */
    __local R rv[LS], rv2[SUB];
    __local int ri[LS], ri2[SUB];
    __local T prow[LW], krow[LW];
    __local T l11[LW][LW];
    __local int pv[LW], slot[LW];
    __local T us[LW][PW];
    __local T sw[2 * LW][PW];
    const long bat = get_group_id(0);
    const int lid = get_local_id(0);
    T v[RPT][LW];
    for (int c0 = 0; c0 < w; c0 += LW) {
        const int bw = min(LW, w - c0);
#pragma unroll
        for (int q = 0; q < RPT; ++q) {
            const int r = lid + q * LS;
#pragma unroll
            for (int c = 0; c < LW; ++c)
                v[q][c] = (r < m && c < bw) ? AT(a, r, c0 + c) : FROM_R(0);
        }
${column_loop()}\
            {
                const int k = c0 + c;
                /* the largest |re| + |im| of column k from row k (a NaN wins), the first
                   such row (LAPACK's i?amax) */
                R best = -1;
                int where = k;
#pragma unroll
                for (int q = 0; q < RPT; ++q) {
                    const int r = lid + q * LS;
                    if (r >= k && r < m) {
                        R x = ABS1(v[q][c]);
                        if (x != x)
                            x = INFINITY;
                        if (x > best) {
                            best = x;
                            where = r;
                        }
                    }
                }
                rv[lid] = best;
                ri[lid] = where;
                const int p = best8(rv, ri, rv2, ri2, LS);
#pragma unroll
                for (int q = 0; q < RPT; ++q) {
                    const int r = lid + q * LS;
                    if (r == p)
                        for (int cc = 0; cc < LW; ++cc)
                            prow[cc] = v[q][cc];
                    if (r == k)
                        for (int cc = 0; cc < LW; ++cc)
                            krow[cc] = v[q][cc];
                }
                if (lid == 0 && live) {
                    piv[piv_off + bat * piv_sb + k] = base + p;
                    pv[c] = p;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                const T d = prow[c];
                const int zero = ISZERO(d);
                if (live && zero && lid == 0 && info[bat] == 0)
                    info[bat] = base + k + 1;
#pragma unroll
                for (int q = 0; q < RPT; ++q) {
                    const int r = lid + q * LS;
                    if (!live) {
                    } else if (p != k && r == k) {
                        for (int cc = 0; cc < LW; ++cc)
                            v[q][cc] = prow[cc];
                    } else if (p != k && r == p) {
                        for (int cc = 0; cc < LW; ++cc)
                            v[q][cc] = krow[cc];
                    }
                    if (live && r > k && r < m && !zero) {
                        const T l = DIV(v[q][c], d);
                        v[q][c] = l;
#pragma unroll
                        for (int cc = c + 1; cc < LW; ++cc)
                            v[q][cc] -= MUL(l, prow[cc]);
                    }
                }
            }
        }
#pragma unroll
        for (int q = 0; q < RPT; ++q) {
            const int r = lid + q * LS;
            if (r < m)
                for (int c = 0; c < bw; ++c)
                    AT(a, r, c0 + c) = v[q][c];
            if (r >= c0 && r < c0 + bw)
                for (int c = 0; c < LW; ++c)
                    l11[r - c0][c] = v[q][c];
        }
        /* slot of the row each swap s brings: a block row (s' < bw), else bw + the first
           swap bringing that row */
        if (lid == 0)
            for (int s = 0; s < bw; ++s) {
                int o = pv[s] - c0;
                if (o >= bw) {
                    o = bw + s;
                    for (int s2 = 0; s2 < s; ++s2)
                        if (pv[s2] == pv[s]) {
                            o = bw + s2;
                            break;
                        }
                }
                slot[s] = o;
            }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        /* the block's swaps on the other columns (a column a work-item); U12 = L11^-1 A12 */
        for (int jx = lid; jx < w - bw; jx += LS) {
            const int j = jx < c0 ? jx : jx + bw;
            for (int s = 0; s < bw; ++s) {
                sw[s][jx] = AT(a, c0 + s, j);
                if (slot[s] == bw + s)
                    sw[bw + s][jx] = AT(a, pv[s], j);
            }
            for (int s = 0; s < bw; ++s) {
                const int o = slot[s];
                const T x = sw[s][jx];
                sw[s][jx] = sw[o][jx];
                sw[o][jx] = x;
            }
            if (j < c0) {
                for (int s = 0; s < bw; ++s)
                    AT(a, c0 + s, j) = sw[s][jx];
            } else {
                T x[LW];
#pragma unroll
                for (int i = 0; i < LW; ++i) {
                    if (i < bw) {
                        T y = sw[i][jx];
                        for (int i2 = 0; i2 < i; ++i2)
                            y -= MUL(l11[i][i2], x[i2]);
                        x[i] = y;
                        us[i][j - c0 - bw] = y;
                        AT(a, c0 + i, j) = y;
                    }
                }
            }
            for (int s = 0; s < bw; ++s)
                if (slot[s] == bw + s)
                    AT(a, pv[s], j) = sw[bw + s][jx];
        }
        const int rest = w - c0 - bw;
        if (rest <= 0)
            break;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        /* the rows below: A22 -= L21 U12, CH columns a round trip */
        for (int j0 = 0; j0 < rest; j0 += CH) {
            T x[RPT][CH];
#pragma unroll
            for (int q = 0; q < RPT; ++q) {
                const int r = lid + q * LS;
#pragma unroll
                for (int h = 0; h < CH; ++h)
                    x[q][h] = (r >= c0 + bw && r < m && j0 + h < rest) ?
                              AT(a, r, c0 + bw + j0 + h) : FROM_R(0);
            }
#pragma unroll
            for (int q = 0; q < RPT; ++q) {
                const int r = lid + q * LS;
#pragma unroll
                for (int h = 0; h < CH; ++h) {
                    T y = x[q][h];
#pragma unroll
                    for (int i = 0; i < LW; ++i)
                        if (i < bw)
                            y -= MUL(v[q][i], us[i][min(j0 + h, PW - 1)]);
                    if (r >= c0 + bw && r < m && j0 + h < rest)
                        AT(a, r, c0 + bw + j0 + h) = y;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
}

% else:
#define RW ${rw}
#define LANES (LS / PW)
#define WARP ${warp}
% if warp > 1:
/* NVIDIA (inline PTX, behind factorizations._grid's probe): the first warp of a work-group
   leads each column, its lanes meeting by warp barriers and exchanging by shuffles. */
#define WARP_SYNC() asm volatile("bar.warp.sync 0xffffffff;" ::: "memory")
inline uint shfl_xor(const uint x, const int lane_mask)
{
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                 : "=r"(r) : "r"(x), "r"(lane_mask));
    return r;
}
% if R == 'double':
inline double SHFL_R(const double x, const int o)
{
    const ulong u = as_ulong(x);
    return as_double(((ulong)shfl_xor((uint)(u >> 32), o) << 32) | shfl_xor((uint)u, o));
}
% else:
#define SHFL_R(x, o) as_float(shfl_xor(as_uint(x), o))
% endif
% else:
/* Portable (a work-item leads each column): for testing the algorithm on any device. */
#define WARP_SYNC()
% endif

% if warp > 1 and redux:
/* redux.sync (compute capability 8 on): one instruction a reduction over the warp */
inline uint redux_max(const uint x)
{
    uint r;
    asm volatile("redux.sync.max.u32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(x));
    return r;
}

inline uint redux_min(const uint x)
{
    uint r;
    asm volatile("redux.sync.min.u32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(x));
    return r;
}

% endif
/* (*bv, *br) = (|x| (a NaN: infinity), row r) where that is larger than *bv */
inline void take_larger(const T x, const int r, R *bv, int *br)
{
    R v = ABS1(x);
    if (v != v)
        v = INFINITY;
    if (v > *bv) {
        *bv = v;
        *br = r;
    }
}

/* (*bv, *br) = the best of the lanes' candidates (*bv -1: none), in every lane of the
   leading warp */
inline void warp_best(R *bv, int *br)
{
% if warp > 1 and redux:
    /* the largest key, then the lowest row holding it: a key orders as its value (values
       are >= 0 or -1, so their bits order as they do), -1 lowest */
% if R == 'double':
    const ulong key = *bv < 0 ? 0 : as_ulong(*bv) + 1;
    const uint hi = redux_max((uint)(key >> 32));
    const ulong best = ((ulong)hi << 32) | redux_max((uint)(key >> 32) == hi ? (uint)key : 0);
    *bv = best == 0 ? -1 : as_double(best - 1);
% else:
    const uint key = *bv < 0 ? 0 : as_uint(*bv) + 1;
    const uint best = redux_max(key);
    *bv = best == 0 ? -1 : as_float(best - 1);
% endif
    *br = (int)redux_min(key == best ? (uint)*br : UINT_MAX);
% elif warp > 1:
    for (int o = WARP / 2; o > 0; o /= 2) {
        const R v = SHFL_R(*bv, o);
        const int r = (int)shfl_xor((uint)*br, o);
        if (BETTER(v, r, *bv, *br)) {
            *bv = v;
            *br = r;
        }
    }
% endif
}

<%def name="grid_publish(kk, ahead)">\
## The leaders' candidate (bv, p) for column kk (and row kk, by its owner) into global
## memory, then the group's arrival; `ahead`: rows whose columns past kk are still to be
## updated by column kk - 1's pivot row (prow, l = the row's column kk - 1), so updated here.
<%
    def row(r):
        if not ahead:
            return 'tile[%s][c]' % r
        return ('(c > %s && !zero ? tile[%s][c] - MUL(tile[%s][%s - 1], prow[c]) : tile[%s][c])'
                % (kk, r, r, kk, r))
%>\
            if (G > 1) {
                const int pq = (${kk}) & 1;
                __global volatile T *own = rows + (pq * (G + 1) + g) * PW;
                __global volatile T *krow = rows + (pq * (G + 1) + G) * PW;
                if (lid == 0) {
                    vals[pq * G + g] = FROM_R(bv);
                    cand[pq * G + g] = p;
                }
                for (int c = lid; c < w; c += WARP) {
                    if (bv >= 0)
                        own[c] = ${row('p - r0')};
                    if (${kk} >= r0 && ${kk} < r0 + nr)
                        krow[c] = ${row('%s - r0' % kk)};
                }
                WARP_SYNC();  /* (the lanes' writes, released by lane 0's arrival) */
                if (lid == 0)
                    release_add(&ints[at]);
            }
</%def>\
__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void getrf_grid(const int m, const int w, const int base, const int nsync, const int at,
                const int left, const int right, MAT(a), __global int *piv,
                const long piv_off, const long piv_sb, __global int *info,
                __global volatile int *ints, __global volatile T *xs, const int track,
                __global int *order)
{
    /* Work-group g holds rows g RW .. g RW + RW - 1 of the panel in local memory; its first
       WARP work-items lead. Per column k the leaders wait for every group's pivot candidate
       (the groups' arrivals counted in ints[at]; none when G = 1), pick the same pivot from
       them, swap the rows and scale column k; then, a column ahead, they update column
       k + 1, find the group's candidate for it and publish it (its row, and row k + 1 by
       its owner, updated as they go out) with the group's arrival, before the whole
       work-group updates the rest of its rows (work-item lid: column lid % PW of rows
       lid / PW + q LANES): that update overlaps the wait for the other groups. The
       candidates are double-buffered by the column's parity: a group publishes column
       k + 1's after every group arrived for column k, so after reading column k - 1's. */
    /* (rows a word longer: the leaders' lanes take a row each, which at PW words a row
       would all read one bank) */
    __local T tile[RW][PW + 1];
    __local T prow[PW];
    __local int state;  /* 1: the pivot was zero */
    __local int failed;  /* the groups did not all run at once */
    __local int pv[PW], row[2 * PW], src[2 * PW];  /* the pivots, the moves after */
    const long bat = 0;
    const int lid = get_local_id(0), g = get_group_id(0), G = get_num_groups(0);
    const int j = lid % PW, lane = lid / PW;
    const int r0 = g * RW, nr = min(RW, m - r0);
    __global volatile int *cand = ints + nsync;  /* [2][G] candidate rows */
    __global volatile T *vals = xs;  /* [2][G] candidate values */
    __global volatile T *rows = xs + 2 * G;  /* [2][G + 1][PW]: candidates' rows, row k */
    for (int e = lid; e < nr * w; e += LS)
        tile[e / w][e % w] = AT(a, r0 + e / w, e % w);
    if (lid == 0)
        failed = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    R bv = -1;  /* the leaders' candidate for the next column: value (-1: none), row */
    int p = r0;
    if (lid < WARP) {
        for (int i = lid; i < nr; i += WARP)
            take_larger(tile[i][0], r0 + i, &bv, &p);
        warp_best(&bv, &p);
${grid_publish('0', False)}\
    }
    for (int k = 0; k < w; ++k) {
        const int par = k & 1;
        /* (after a failed barrier the loop runs on without work: barriers stay uniform) */
        if (lid < WARP && !failed) {
            if (G > 1) {
                if (lid == 0 && grid_poll(&ints[at], G * (k + 1))) {
                    failed = 1;
                    info[0] = -1;
                    /* pivots that name rows of the panel: the row swaps after the panel
                       read them before the caller sees info */
                    for (int c = k; c < w; ++c)
                        piv[piv_off + c] = base + c;
                }
                WARP_SYNC();
            }
            /* (the candidates of other groups, and addresses made of them, only after a
               barrier that held) */
            if (G > 1 && !failed) {
                __global volatile T *krow = rows + (par * (G + 1) + G) * PW;
                bv = -1;
% if warp > 1:
                /* (the loads of a lane issued together: one wait for the memory, not one
                   a load) */
% for q in range(-(-ls // warp)):
                const int cq${q} = lid + ${q * warp};
                const R cv${q} = cq${q} < G ? RE(vals[par * G + cq${q}]) : (R)-1;
                const int cr${q} = cq${q} < G ? cand[par * G + cq${q}] : m;
% endfor
% for q in range(-(-ls // warp)):
                if (BETTER(cv${q}, cr${q}, bv, p)) {
                    bv = cv${q};
                    p = cr${q};
                }
% endfor
% else:
                for (int q = 0; q < G; ++q)
                    if (BETTER(RE(vals[par * G + q]), cand[par * G + q], bv, p)) {
                        bv = RE(vals[par * G + q]);
                        p = cand[par * G + q];
                    }
% endif
                warp_best(&bv, &p);
                __global volatile T *best = rows + (par * (G + 1) + p / RW) * PW;
                const int swap = p != k && p >= r0 && p < r0 + nr;
% if warp > 1:
% for c in range(-(-pw // warp)):
                const int pc${c} = lid + ${c * warp};
                const T pb${c} = pc${c} < w ? best[pc${c}] : FROM_R(0);
                const T ps${c} = pc${c} < w && swap ? krow[pc${c}] : FROM_R(0);
% endfor
% for c in range(-(-pw // warp)):
                if (pc${c} < w) {
                    prow[pc${c}] = pb${c};
                    if (swap)
                        tile[p - r0][pc${c}] = ps${c};
                }
% endfor
% else:
                for (int c = 0; c < w; ++c) {
                    prow[c] = best[c];
                    if (swap)
                        tile[p - r0][c] = krow[c];
                }
% endif
            } else if (G == 1) {
                for (int c = lid; c < w; c += WARP) {
                    const T x = tile[p][c];
                    prow[c] = x;
                    tile[p][c] = tile[k][c];
                }
            }
            WARP_SYNC();
            if (!failed) {
                const T d = prow[k];
                const int zero = ISZERO(d);
                if (k >= r0 && k < r0 + nr)
                    for (int c = lid; c < w; c += WARP)
                        tile[k - r0][c] = prow[c];
                if (lid == 0) {
                    state = zero;
                    pv[k] = p;
                    if (g == 0) {
                        piv[piv_off + k] = base + p;
                        if (zero && info[0] == 0)
                            info[0] = base + k + 1;
                    }
                }
                /* column k scaled, column k + 1 updated and searched, row by row */
                const int next = k + 1 < w;
                bv = -1;
                p = r0;
                for (int i = max(k + 1 - r0, 0) + lid; i < nr; i += WARP) {
                    T x = next ? tile[i][k + 1] : FROM_R(0);
                    if (!zero) {
                        const T l = DIV(tile[i][k], d);
                        tile[i][k] = l;
                        if (next) {
                            x -= MUL(l, prow[k + 1]);
                            tile[i][k + 1] = x;
                        }
                    }
                    take_larger(x, r0 + i, &bv, &p);
                }
                if (next) {
                    warp_best(&bv, &p);
                    WARP_SYNC();  /* (the lanes' columns k and k + 1) */
${grid_publish('k + 1', True)}\
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the rest of the rows below k (column k + 1: the leaders) */
        if (!failed && state == 0 && j > k + 1 && j < w) {
            const int lo = max(k + 1 - r0, 0);
            const T pj = prow[j];
            for (int i = lo + (lane - lo % LANES + LANES) % LANES; i < nr; i += LANES)
                tile[i][j] -= MUL(tile[i][k], pj);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (!failed)
        for (int e = lid; e < nr * w; e += LS)
            AT(a, r0 + e / w, e % w) = tile[e / w][e % w];
    /* The panel's row swaps on the matrix's columns outside it (`left` before it, `right`
       after; LAPACK's laswp after the panel), SC columns at a time, dealt to the groups
       round-robin: the moved rows' elements read into registers, then written. */
    const int npiv = failed ? 0 : w, outside = failed ? 0 : left + right;
${swap_moves('npiv', '0', '0')}\
    barrier(CLK_LOCAL_MEM_FENCE);
<%
    nper = 2 * pw * sc // ls
    assert nper * ls == 2 * pw * sc, (pw, sc, ls)
%>\
    for (int chunk = g * ${sc}; chunk < outside; chunk += G * ${sc}) {
% for i in range(nper):
        const int t${i} = (lid + ${i * ls}) / ${sc}, c${i} = chunk + (lid + ${i * ls}) % ${sc};
        const int j${i} = c${i} < left ? c${i} - left : w + c${i} - left;
        const int move${i} = t${i} < 2 * npiv && c${i} < outside && row[t${i}] >= 0;
        const T x${i} = move${i} ? AT(a, src[t${i}], j${i}) : FROM_R(0);
% endfor
        barrier(CLK_GLOBAL_MEM_FENCE);  /* (every read of the chunk before any write) */
% for i in range(nper):
        if (move${i})
            AT(a, row[t${i}], j${i}) = x${i};
% endfor
    }
    /* With `track`, group 0 moves the matrix's rows' order likewise: order[i] = the row of
       the input now row i, order[M + order[i]] = i (M = base + m rows; the first panel sets
       both to the identity, even where its barriers failed: the later panels' moves then
       still permute rows that exist). Barriers reached by every group. */
<% assert ls >= 2 * pw, (ls, pw) %>\
    const int tracking = track && g == 0 && !failed, M = base + m;
    if (track && g == 0 && base == 0)
        for (int i = lid; i < M; i += LS)
            order[i] = order[M + i] = i;
    barrier(CLK_GLOBAL_MEM_FENCE);
    const int moved = tracking && lid < 2 * npiv && row[lid] >= 0;
    const int was = moved ? order[base + src[lid]] : 0;
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (moved) {
        order[base + row[lid]] = was;
        order[M + was] = base + row[lid];
    }
}
% endif
% else:
/* The sum over the work-items of the vectors a[lid vl + c] (c < vl) into a[0:vl] or b[0:vl]
   (returned): rounds of eight, between a (LS vl entries) and b (SUB vl). */
inline __local T *vsum8(__local T *a, __local T *b, const int vl)
{
    const int lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = LS; s > 1; s = (s + 7) / 8) {
        const int h = (s + 7) / 8;
        for (int e = lid; e < h * vl; e += LS) {
            const int g = e / vl, c = e % vl;
            T x = a[g * vl + c];
            for (int i = 1; i < 8; ++i)
                if (g + h * i < s)
                    x += a[(g + h * i) * vl + c];
            b[g * vl + c] = x;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        __local T *t = a;
        a = b;
        b = t;
    }
    return a;
}

__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void geqrf_panel(const int m, const int w, const int want_vh, MAT(a), MAT(vb), MAT(vh),
                 __global T *tau, const long tau_off, const long tau_sb)
{
    /* Work-item lid holds rows lid + q LS (q < RPT) of LW columns (a block) in v. Per
       column, one reduction of LW sums over the rows below the diagonal: ||x||^2 (component
       c), x^H a_cc for the block's later columns cc (to apply the reflector to them),
       V_cc^H x for its earlier reflectors cc (the block's T). Per block, the rest of the
       panel: C -= V T^H (V^H C), V from registers, CH columns a reduction. */
    __local T red[LS * VL], red2[SUB * VL];
    __local T krow[LW];
    __local T tb[LW][LW];
    __local T zs[LW][CH];
    const long bat = get_group_id(0);
    const int lid = get_local_id(0);
    T v[RPT][LW];
    for (int c0 = 0; c0 < w; c0 += LW) {
        const int bw = min(LW, w - c0);
        if (lid < LW * LW)
            tb[lid / LW][lid % LW] = FROM_R(0);
#pragma unroll
        for (int q = 0; q < RPT; ++q) {
            const int r = lid + q * LS;
#pragma unroll
            for (int c = 0; c < LW; ++c)
                v[q][c] = (r < m && c < bw) ? AT(a, r, c0 + c) : FROM_R(0);
        }
${column_loop()}\
            {
                const int k = c0 + c;
                T acc[LW];
#pragma unroll
                for (int cc = 0; cc < LW; ++cc)
                    acc[cc] = FROM_R(0);
#pragma unroll
                for (int q = 0; q < RPT; ++q) {
                    const int r = lid + q * LS;
                    if (r > k && r < m) {
                        const T x = v[q][c];
#pragma unroll
                        for (int cc = 0; cc < LW; ++cc) {
                            if (cc == c)
                                acc[cc] += FROM_R(RE(MUL(CONJ(x), x)));
                            else if (cc < c)
                                acc[cc] += MUL(CONJ(v[q][cc]), x);
                            else
                                acc[cc] += MUL(CONJ(x), v[q][cc]);
                        }
                    }
                    if (r == k)
                        for (int cc = 0; cc < LW; ++cc)
                            krow[cc] = v[q][cc];
                }
#pragma unroll
                for (int cc = 0; cc < LW; ++cc)
                    red[lid * LW + cc] = acc[cc];
                __local T *sum = vsum8(red, red2, LW);
                /* LAPACK's larfg: beta = -sign(re alpha) ||(alpha, x)||, tau = (beta - alpha)
                   / beta, v = x / (alpha - beta); H = I (tau = 0) when x = 0 and alpha is
                   real */
                const R xn2 = RE(sum[c]);
                const T alpha = krow[c];
                T tv = FROM_R(0), scale = FROM_R(0);
                R beta = RE(alpha);
                if (xn2 != 0${' || IM(alpha) != 0' if cplx else ''}) {
                    beta = -copysign(sqrt(RE(alpha) * RE(alpha) + IM(alpha) * IM(alpha) + xn2),
                                     RE(alpha));
% if cplx:
                    tv = (T)((beta - RE(alpha)) / beta, -IM(alpha) / beta);
% else:
                    tv = (beta - alpha) / beta;
% endif
                    scale = DIV(FROM_R(1), alpha - FROM_R(beta));
                }
                T f[LW];
#pragma unroll
                for (int cc = 0; cc < LW; ++cc)
                    f[cc] = cc > c ? MUL(CONJ(tv), krow[cc] + MUL(CONJ(scale), sum[cc]))
                                   : FROM_R(0);
#pragma unroll
                for (int q = 0; q < RPT; ++q) {
                    const int r = lid + q * LS;
                    if (live && r > k && r < m) {
                        const T vr = MUL(v[q][c], scale);
                        v[q][c] = vr;
#pragma unroll
                        for (int cc = c + 1; cc < LW; ++cc)
                            v[q][cc] -= MUL(vr, f[cc]);
                    } else if (live && r == k) {
                        v[q][c] = FROM_R(beta);
#pragma unroll
                        for (int cc = c + 1; cc < LW; ++cc)
                            v[q][cc] -= f[cc];
                    }
                }
                /* T[0:c, c] = -tau T[0:c, 0:c] d, d_i = V_i^H v (V_i at row k: krow[i]) */
                if (live && lid < c) {
                    T x = FROM_R(0);
                    for (int i = lid; i < c; ++i)
                        x += MUL(tb[lid][i], CONJ(krow[i]) + MUL(scale, sum[i]));
                    tb[lid][c] = -MUL(tv, x);
                }
                if (live && lid == 0) {
                    tb[c][c] = tv;
                    tau[tau_off + bat * tau_sb + k] = tv;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
        /* R and V into a, V (explicit) into vb (and V^H into vh); v keeps V explicit */
#pragma unroll
        for (int q = 0; q < RPT; ++q) {
            const int r = lid + q * LS;
#pragma unroll
            for (int c = 0; c < LW; ++c) {
                const int k = c0 + c;
                const T x = r > k ? v[q][c] : FROM_R((R)(r == k));
                if (r < m && c < bw) {
                    AT(a, r, k) = v[q][c];
                    AT(vb, r, k) = x;
                    if (want_vh)
                        AT(vh, k, r) = CONJ(x);
                }
                v[q][c] = c < bw ? x : FROM_R(0);
            }
        }
        const int rest = w - c0 - bw;
        if (rest <= 0)
            break;
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (int j0 = 0; j0 < rest; j0 += CH) {
            T x[RPT][CH];
            T y[LW][CH];
#pragma unroll
            for (int q = 0; q < RPT; ++q) {
                const int r = lid + q * LS;
#pragma unroll
                for (int h = 0; h < CH; ++h)
                    x[q][h] = (r >= c0 && r < m && j0 + h < rest) ?
                              AT(a, r, c0 + bw + j0 + h) : FROM_R(0);
            }
#pragma unroll
            for (int i = 0; i < LW; ++i)
#pragma unroll
                for (int h = 0; h < CH; ++h) {
                    T s = FROM_R(0);
#pragma unroll
                    for (int q = 0; q < RPT; ++q)
                        s += MUL(CONJ(v[q][i]), x[q][h]);
                    red[lid * VL + i * CH + h] = s;
                }
            __local T *sum = vsum8(red, red2, VL);
            if (lid < LW * CH) {  /* (T^H (V^H C))[i][h], T upper */
                const int i = lid / CH, h = lid % CH;
                T s = FROM_R(0);
                for (int i2 = 0; i2 <= i; ++i2)
                    s += MUL(CONJ(tb[i2][i]), sum[i2 * CH + h]);
                zs[i][h] = s;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
            for (int q = 0; q < RPT; ++q) {
                const int r = lid + q * LS;
#pragma unroll
                for (int h = 0; h < CH; ++h) {
                    T s = x[q][h];
#pragma unroll
                    for (int i = 0; i < LW; ++i)
                        s -= MUL(v[q][i], zs[i][h]);
                    if (r >= c0 && r < m && j0 + h < rest)
                        AT(a, r, c0 + bw + j0 + h) = s;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        }
    }
}
% endif
% endif
% if part == 'gesvj':
## gesvj_round(npairs, len, vlen, round, inner, tol, pairs, x..., v..., flags, flag_off,
##   norms): a round of one-sided block Jacobi. The rows of x (p, nvec, len) are the
##   vectors, in blocks of JB rows; work-group g takes the pair of blocks
##   pairs[round][g % npairs] of matrix g / npairs: their Gram matrix G = W^H W (W: the 2 JB
##   vectors as columns), and where two of them are not orthogonal (|G_ij| > tol
##   sqrt(G_ii G_jj)), `inner` sweeps of cyclic Jacobi on G (a round-robin of JB disjoint
##   rotations a step) whose product J rotates the vectors (W J) and the same rows of v
##   (p, nvec, vlen); flags[flag_off + matrix] counts the pairs that rotated; norms (p, nvec)
##   gets the vectors' squared lengths. J is kept as J - I and applied as W + W (J - I):
##   vectors that barely turn keep their bits (most, in the last sweeps).
#define JB ${jb}
#define JW (2 * JB)
#define TC ${tc}
#define GB (JW / 2)  /* the Gram matrix's 2 x 2 blocks a side */
#define GT (LS > GB * GB ? LS / (GB * GB) : 1)
#define NT ((GB * GB * GT + LS - 1) / LS)
#define PF ((JW * TC + LS - 1) / LS)  /* a work-item's loads of a tile */
<% UNROLL_PF = '#pragma unroll' if unroll else '' %>\
#define ABS2(a) RE(MUL(a, CONJ(a)))
/* vector k (0 <= k < JW) of the pair: block bi's JB vectors, then bj's */
#define VEC(k) ((k) < JB ? bi * JB + (k) : bj * JB + (k) - JB)
/* rotation k's columns at step st of a sweep: the circle method over JW players */
#define PLAYER_P(k, st) ((k) == 0 ? JW - 1 : ((st) + (k)) % (JW - 1))
#define PLAYER_Q(k, st) (((st) + JW - 1 - (k)) % (JW - 1))
#define MAX_INNER 16
#define TILE(k, t) tile[(k) * (TC + 1) + (t)]

<%def name="fetch(name, len, at)">\
${UNROLL_PF}
        for (int h = 0; h < PF; ++h) {
            const int e = lid + h * LS, t = ${at} + e % TC;
            pre[h] = e < JW * TC && t < ${len} ? AT(${name}, VEC(e / TC), t) : FROM_R(0);
        }
</%def>

## The caller's body once a tile of the pair's rows (TC elements from t0) is in TILE, the
## next tile's loads in flight meanwhile (from registers into TILE at the next step).
<%def name="tile_loop(name, len)">\
    {
        T pre[PF];
${fetch(name, len, '0')}\
        for (int t0 = 0; t0 < ${len}; t0 += TC) {
${UNROLL_PF}
            for (int h = 0; h < PF; ++h) {
                const int e = lid + h * LS;
                if (e < JW * TC)
                    TILE(e / TC, e % TC) = pre[h];
            }
            /* (global too: other work-items store these elements after it) */
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
            if (t0 + TC < ${len}) {
${fetch(name, len, 't0 + TC')}\
            }
${caller.body()}\
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
</%def>

<%def name="rotate(name, len)">\
    /* a work-item: columns 4 cg .. 4 cg + 3 at tg and tg + TC / 2 (D's loads broadcast
       over a warp, the tile's consecutive) */
<%call expr="tile_loop(name, len)">\
        for (int e = lid; e < JW / 4 * (TC / 2); e += LS) {
            const int tg = e % (TC / 2), c0 = 4 * (e / (TC / 2));
            if (t0 + tg >= ${len})
                continue;  /* (both of its elements past the rows' end) */
            T s[2][4];
#pragma unroll
            for (int u = 0; u < 2; ++u)
#pragma unroll
                for (int w = 0; w < 4; ++w)
                    s[u][w] = TILE(c0 + w, tg + u * (TC / 2));
            for (int k = 0; k < JW; ++k) {
                const T x0 = TILE(k, tg), x1 = TILE(k, tg + TC / 2);
#pragma unroll
                for (int w = 0; w < 4; ++w) {
                    const T d = D[k][c0 + w];
                    s[0][w] += MUL(d, x0);
                    s[1][w] += MUL(d, x1);
                }
            }
#pragma unroll
            for (int u = 0; u < 2; ++u)
                if (t0 + tg + u * (TC / 2) < ${len})
#pragma unroll
                    for (int w = 0; w < 4; ++w)
                        AT(${name}, VEC(c0 + w), t0 + tg + u * (TC / 2)) = s[u][w];
        }
</%call>\
</%def>

__kernel void gesvj_round(const int npairs, const int len, const int vlen, const int round,
                          const int inner, const R tol, __global const int *pairs, MAT(x),
                          MAT(v), __global int *flags, const int flag_off, __global R *norms)
{
    __local T tile[JW * (TC + 1)];  /* TILE(k, t); afterwards the Gram partial sums */
    __local T G[JW][JW + 1];
    __local T D[JW][JW + 1];  /* J - I */
    __local R rc[JB], rs[JB], rm[JB], rd[JW];
    __local T re[JB];
    __local int busy[JB];
    __local int swept[MAX_INNER + 1];
    const int lid = get_local_id(0);
    const long bat = get_group_id(0) / npairs;
    const int at = 2 * (round * npairs + (int)(get_group_id(0) % npairs));
    const int bi = pairs[at], bj = pairs[at + 1];
    if (lid <= MAX_INNER)
        swept[lid] = 0;

    /* G by 2 x 2 blocks of entries a work-item, GT groups of work-items taking every GT-th
       element of a tile (their partial sums added through the tile's memory: JW TC >=
       GT JW JW) */
    T acc[NT][4];
#pragma unroll
    for (int q = 0; q < NT; ++q)
#pragma unroll
        for (int h = 0; h < 4; ++h)
            acc[q][h] = FROM_R(0);
<%call expr="tile_loop('x', 'len')">\
#pragma unroll
        for (int q = 0; q < NT; ++q) {
            const int e = lid + q * LS, blk = e % (GB * GB);
            const int i = 2 * (blk / GB), j = 2 * (blk % GB);
            if (e < GB * GB * GT)
                for (int t = e / (GB * GB); t < min(TC, len - t0); t += GT) {
                    const T a0 = CONJ(TILE(i, t)), a1 = CONJ(TILE(i + 1, t));
                    const T b0 = TILE(j, t), b1 = TILE(j + 1, t);
                    acc[q][0] += MUL(a0, b0);
                    acc[q][1] += MUL(a0, b1);
                    acc[q][2] += MUL(a1, b0);
                    acc[q][3] += MUL(a1, b1);
                }
        }
</%call>\
#pragma unroll
    for (int q = 0; q < NT; ++q) {
        const int e = lid + q * LS, blk = e % (GB * GB), g = e / (GB * GB);
        const int i = 2 * (blk / GB), j = 2 * (blk % GB);
        if (e < GB * GB * GT) {
            tile[(g * JW + i) * JW + j] = acc[q][0];
            tile[(g * JW + i) * JW + j + 1] = acc[q][1];
            tile[(g * JW + i + 1) * JW + j] = acc[q][2];
            tile[(g * JW + i + 1) * JW + j + 1] = acc[q][3];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = lid; e < JW * JW; e += LS) {
        T s = tile[e];
        for (int g = 1; g < GT; ++g)
            s += tile[g * JW * JW + e];
        G[e / JW][e % JW] = s;
        D[e / JW][e % JW] = FROM_R(0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    R trace = 0;
    for (int i = 0; i < JW; ++i)
        trace += RE(G[i][i]);
    /* as syevj1: rotations by rounding-level angles would only erode orthogonality; nor
       does a pair below the floor count as unfinished (the inner sweeps skip it) */
    const R floor = EPS * EPS * trace;
    for (int e = lid; e < JW * JW; e += LS) {
        const int i = e / JW, j = e % JW;
        if (i != j) {
            const R g2 = ABS2(G[i][j]);
            if (g2 > tol * tol * RE(G[i][i]) * RE(G[j][j]) && g2 > floor * floor)
                atomic_or(&swept[MAX_INNER], 1);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!swept[MAX_INNER]) {  /* every work-item: orthogonal already */
        if (lid < JW)
            norms[bat * npairs * JW + VEC(lid)] = RE(G[lid][lid]);
        return;
    }
    if (lid == 0)
        atomic_inc(&flags[flag_off + bat]);
    for (int sw = 0; sw < min(inner, MAX_INNER); ++sw) {
        for (int st = 0; st < JW - 1; ++st) {
            if (lid < JB) {
                const int p = PLAYER_P(lid, st), q = PLAYER_Q(lid, st);
                const T apq = G[p][q];
                const R g = sqrt(ABS2(apq));
                const R alpha = RE(G[p][p]), beta = RE(G[q][q]);
                const int on = !(g <= EPS * sqrt(fabs(alpha * beta)) || g <= floor);
                if (on) {
                    const R theta = (beta - alpha) / (2 * g);
                    R t = 1 / (fabs(theta) + sqrt(theta * theta + 1));
                    if (theta < 0)
                        t = -t;
                    const R c = 1 / sqrt(t * t + 1), s = t * c;
                    rc[lid] = c;
                    rs[lid] = s;
                    rm[lid] = -s * s / (1 + c);  /* c - 1, without cancellation */
                    re[lid] = apq / g;
                    rd[2 * lid] = alpha - t * g;
                    rd[2 * lid + 1] = beta + t * g;
                    atomic_or(&swept[sw], 1);
                }
                busy[lid] = on;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            /* J_k = [c, s e; -s conj(e), c] in rows and columns p, q: I as s -> 0 */
            for (int e = lid; e < JW * JB; e += LS) {  /* columns p, q: G J_k and D J_k */
                const int r = e % JW, k = e / JW;
                if (busy[k]) {
                    const int p = PLAYER_P(k, st), q = PLAYER_Q(k, st);
                    const R c = rc[k], s = rs[k];
                    const T se = s * re[k], sce = s * CONJ(re[k]);
                    const T gp = G[r][p], gq = G[r][q];
                    G[r][p] = c * gp - MUL(sce, gq);
                    G[r][q] = MUL(se, gp) + c * gq;
                    const T dp = D[r][p], dq = D[r][q];
                    T np = c * dp - MUL(sce, dq), nq = MUL(se, dp) + c * dq;
                    if (r == p) {  /* (I + D) J_k - I */
                        np += FROM_R(rm[k]);
                        nq += se;
                    } else if (r == q) {
                        np -= sce;
                        nq += FROM_R(rm[k]);
                    }
                    D[r][p] = np;
                    D[r][q] = nq;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int e = lid; e < JW * JB; e += LS) {  /* rows p, q: J_k^H G */
                const int col = e % JW, k = e / JW;
                if (busy[k]) {
                    const int p = PLAYER_P(k, st), q = PLAYER_Q(k, st);
                    const R c = rc[k], s = rs[k];
                    const T gp = G[p][col], gq = G[q][col];
                    if (col == p) {
                        G[p][p] = FROM_R(rd[2 * k]);
                        G[q][p] = FROM_R(0);
                    } else if (col == q) {
                        G[p][q] = FROM_R(0);
                        G[q][q] = FROM_R(rd[2 * k + 1]);
                    } else {
                        G[p][col] = c * gp - s * MUL(re[k], gq);
                        G[q][col] = s * MUL(CONJ(re[k]), gp) + c * gq;
                    }
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (!swept[sw])
            break;
    }
    if (lid < JW)  /* the rotated vectors' squared lengths (J^H G J's diagonal) */
        norms[bat * npairs * JW + VEC(lid)] = RE(G[lid][lid]);
${rotate('x', 'len')}\
${rotate('v', 'vlen')}\
}
% endif
