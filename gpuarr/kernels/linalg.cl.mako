## Kernels of gpuarr/factorizations.py: unblocked factorizations and triangular solves, one
## work-group per matrix of a batch (the batched small-matrix path, and the diagonal blocks
## and panels of the blocked algorithms, whose trailing updates are GEMMs).
## Inputs: dtype ('float32', 'float64', 'complex64', 'complex128'), ls (the work-group size).
## Every matrix argument is (pointer, offset, batch stride, row stride, column stride) in
## elements; sizes, flags and offsets are arguments, so one build serves every shape.
## Defines:
##   potrf(n, base, clean, a..., info): in-place lower Cholesky of each n x n matrix (reads and
##     writes the lower triangle); info[b] = base + k + 1 at the first non-positive pivot k.
##   getrf(m, n, base, a..., piv, piv_off, piv_sb, info): in-place LU with partial pivoting
##     of each m x n matrix (LAPACK's getf2); piv[b, k] = base + the row swapped with row k;
##     info[b] = base + k + 1 at the first exactly zero pivot (the factorization goes on).
##   laswp(rows_base, npiv, ncols, reverse, a..., piv, piv_off, piv_sb): the row swaps of
##     piv[0:npiv] (minus rows_base) applied in order (last first when `reverse`) to the
##     columns of a; work-items over columns.
##   potrf1(count, n, base, clean, a..., info), getrf1(count, m, n, base, a..., piv, piv_off,
##     piv_sb, info), getrs1(count, n, nrhs, lu..., piv, piv_off, piv_sb, b...) (b = A^-1 b from
##     A's LU factors): one work-item per matrix (count matrices), no barriers: for CPUs.
##   potrf's `clean` zeroes the strict upper triangle once the factor is complete.
##   syevj1(count, n, upper, a..., v..., w, w_off, w_sb): eigenvalues (ascending, into w) and
##     eigenvectors (the columns of v) of each Hermitian matrix a (its lower triangle, or the
##     upper when `upper`; a is overwritten) by cyclic Jacobi, one work-item per matrix.
##   trsm(n, nrhs, lower, unit, conj_t, t..., b...): b = t^-1 b in place, t lower or upper
##     triangular (unit diagonal when `unit`), conj(t) when conj_t. Work-items over columns
##     of b.
<%page args="dtype, ls"/>\
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

__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void potrf(const int n, const int base, const int clean, MAT(a), __global int *info)
{
    const long bat = get_group_id(0);
    const int lid = get_local_id(0);
    for (int k = 0; k < n; ++k) {
        barrier(CLK_GLOBAL_MEM_FENCE);
        const R d = RE(AT(a, k, k));
        if (!(d > 0)) {  /* NaN too */
            if (lid == 0 && info[bat] == 0)
                info[bat] = base + k + 1;
            return;  /* every work-item read the same d */
        }
        const R s = sqrt(d);
        barrier(CLK_GLOBAL_MEM_FENCE);
        if (lid == 0)
            AT(a, k, k) = FROM_R(s);
        for (int i = k + 1 + lid; i < n; i += LS)
            AT(a, i, k) = AT(a, i, k) / s;
        barrier(CLK_GLOBAL_MEM_FENCE);
        const int m = n - k - 1;
        for (int t = lid; t < m * m; t += LS) {
            const int i = k + 1 + t / m, j = k + 1 + t % m;
            if (j <= i)
                AT(a, i, j) -= MUL(AT(a, i, k), CONJ(AT(a, j, k)));
        }
    }
    if (clean)
        for (int t = lid; t < n * n; t += LS)
            if (t % n > t / n)
                AT(a, t / n, t % n) = FROM_R(0);
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

__kernel void potrf1(const int count, const int n, const int base, const int clean, MAT(a),
                     __global int *info)
{
    const long bat = get_global_id(0);
    if (bat >= count)
        return;
    /* row by row (Cholesky-Banachiewicz): the inner products run along rows */
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j <= i; ++j) {
            T x = AT(a, i, j);
            for (int k = 0; k < j; ++k)
                x -= MUL(AT(a, i, k), CONJ(AT(a, j, k)));
            if (j < i) {
                AT(a, i, j) = x / RE(AT(a, j, j));
                continue;
            }
            const R d = RE(x);
            if (!(d > 0)) {
                if (info[bat] == 0)
                    info[bat] = base + i + 1;
                return;
            }
            AT(a, i, i) = FROM_R(sqrt(d));
        }
    }
    if (clean)
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j)
                AT(a, i, j) = FROM_R(0);
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
                    MAT(a), __global const int *piv, const long piv_off, const long piv_sb)
{
    const long bat = get_global_id(1);
    const int j = get_global_id(0);
    if (j >= ncols)
        return;
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

__kernel void trsm(const int n, const int nrhs, const int lower, const int unit,
                   const int conj_t, MAT(t), MAT(b))
{
    const long bat = get_global_id(1);
    const int j = get_global_id(0);
    if (j >= nrhs)
        return;
    for (int s = 0; s < n; ++s) {
        const int i = lower ? s : n - 1 - s;
        T x = AT(b, i, j);
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
