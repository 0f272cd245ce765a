## Kernels of gpuarr/tridiagonal.py: eigenvalues and eigenvectors of one real symmetric
## tridiagonal matrix (diagonal d, off-diagonal e) in the working type W.
## Inputs: wtype ('double' or 'float'), ls (stebz's work-group size), pts (stebz's points a
## round per eigenvalue, dividing ls), ch (stein's steps whose loads go out together).
## Kernels:
##   bounds(n, d, e, eps, lim): one work-group: lim[0..4] = an interval holding every
##     eigenvalue, pivmin, 2 eps ||T|| (stebz's absolute tolerance), W's eps ||T|| (stein's).
##   stebz(n, rounds, d, e, lim, reltol, w): w[k] = the k-th smallest eigenvalue (k < n), by
##     multisection of lim's interval: PTS work-items an eigenvalue, each counting the
##     eigenvalues below its point (Sturm: the signs of LDL^T's pivots, LAPACK's laebz with
##     its pivmin), `rounds` rounds; the bracket shrinks PTS + 1 fold a round.
##   stein(n, d, e, w, lim, work, z): z[:, k] = the eigenvector of w[k], unit 2-norm, largest
##     component positive: three rounds of inverse iteration (LAPACK's lagtf / lagts: LU with
##     partial pivoting of T - w[k] I, pivots smaller than lim[4] raised to it) from a fixed
##     pseudo-random start; one work-item an eigenvalue, z and work (5 n x n: the factors)
##     laid out [row][k] so that neighbouring work-items touch neighbouring words.
<%page args="wtype, ls, pts, ch=8"/>\
% if wtype == 'double':
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
typedef ${wtype} W;
#define WEPS ${'DBL_EPSILON' if wtype == 'double' else 'FLT_EPSILON'}
#define TINY ${'DBL_MIN' if wtype == 'double' else 'FLT_MIN'}
#define LS ${ls}
#define PTS ${pts}
#define CH ${ch}

__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void bounds(const int n, __global const W *d, __global const W *e, const W eps,
            __global W *lim)
{
    /* lim: the interval holding every eigenvalue (Gershgorin's, widened), pivmin, the
       absolute tolerance (2 eps ||T||) and stein's tiny-pivot bound (W's eps ||T||) */
    __local W lo[LS], hi[LS], nrm[LS], e2[LS];
    const int lid = get_local_id(0);
    W l = INFINITY, h = -INFINITY, t = 0, m = 0;
    for (int i = lid; i < n; i += LS) {
        const W r = (i > 0 ? fabs(e[i - 1]) : 0) + (i < n - 1 ? fabs(e[i]) : 0);
        l = fmin(l, d[i] - r);
        h = fmax(h, d[i] + r);
        t = fmax(t, fabs(d[i]) + r);
        if (i < n - 1)
            m = fmax(m, e[i] * e[i]);
    }
    lo[lid] = l;
    hi[lid] = h;
    nrm[lid] = t;
    e2[lid] = m;
    for (int span = LS / 2; span > 0; span /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < span) {
            lo[lid] = fmin(lo[lid], lo[lid + span]);
            hi[lid] = fmax(hi[lid], hi[lid + span]);
            nrm[lid] = fmax(nrm[lid], nrm[lid + span]);
            e2[lid] = fmax(e2[lid], e2[lid + span]);
        }
    }
    if (lid == 0) {
        const W tn = fmax(nrm[0], TINY), pivmin = TINY * fmax((W)1, e2[0]);
        const W pad = 2 * eps * tn + 4 * pivmin;
        lim[0] = lo[0] - pad;
        lim[1] = hi[0] + pad;
        lim[2] = pivmin;
        lim[3] = 2 * eps * tn;
        lim[4] = WEPS * tn;
    }
}

__kernel __attribute__((reqd_work_group_size(LS, 1, 1)))
void stebz(const int n, const int rounds, __global const W *d, __global const W *e,
           __global const W *lim, const W reltol, __global W *w)
{
    __local int above[LS];
    const int lid = get_local_id(0), j = lid % PTS, first = lid - j;
    const int k = get_global_id(0) / PTS;
    const W pivmin = lim[2], abstol = lim[3];
    W lo = lim[0], hi = lim[1];
    for (int round = 0; round < rounds; ++round) {
        const W width = hi - lo;
        const int done = k >= n || width <= fmax(abstol, reltol * fmax(fabs(lo), fabs(hi)));
        const W x = lo + width * (W)(j + 1) / (W)(PTS + 1);
        int count = 0;
        if (!done) {
            W q = d[0] - x;
            if (fabs(q) < pivmin)
                q = -pivmin;
            count = q < 0;
            for (int i = 1; i < n; ++i) {
                q = (d[i] - x) - e[i - 1] * e[i - 1] / q;
                if (fabs(q) < pivmin)
                    q = -pivmin;
                count += q < 0;
            }
        }
        above[lid] = count > k;  /* the k-th eigenvalue lies below x */
        barrier(CLK_LOCAL_MEM_FENCE);
        int u = 0;
        while (u < PTS && !above[first + u])
            ++u;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!done) {
            const W nlo = u == 0 ? lo : lo + width * (W)u / (W)(PTS + 1);
            hi = u == PTS ? hi : lo + width * (W)(u + 1) / (W)(PTS + 1);
            lo = nlo;
        }
    }
    if (j == 0 && k < n)
        w[k] = lo + (hi - lo) / 2;
}

/* a pseudo-random start in [-1, 1): a hash of (i, k) */
inline W start(const uint i, const uint k)
{
    uint h = i * 0x9E3779B1u ^ (k + 0x7F4A7C15u) * 0x85EBCA77u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    h *= 0x297A2D39u;
    h ^= h >> 15;
    return (W)(h >> 8) * (W)(1.0 / 8388608.0) - 1;
}

__kernel void stein(const int n, __global const W *d, __global const W *e,
                    __global const W *w, __global const W *lim, __global W *work,
                    __global W *z)
{
    const int k = get_global_id(0);
    if (k >= n)
        return;
    const long N = get_global_size(0);
    /* the factors of T - w[k] I = P L U: U's diagonal (its inverse), first and second
       superdiagonals, L's multipliers, the interchanges (1: rows i, i + 1 swapped) */
    __global W *ua = work, *ub = work + n * N, *ud = work + 2 * n * N,
               *lc = work + 3 * n * N, *sw = work + 4 * n * N;
#define AT(p, i) p[(long)(i) * N + k]
    const W lambda = w[k], tol = lim[4];
    W a = d[0] - lambda, b = n > 1 ? e[0] : 0;
    for (int i = 0; i < n - 1; ++i) {
        const W c = e[i], an = d[i + 1] - lambda, bn = i + 1 < n - 1 ? e[i + 1] : 0;
        W m, dd = 0, anew, bnew;
        if (fabs(a) >= fabs(c)) {  /* no interchange */
            const W p = fabs(a) < tol ? copysign(tol, a) : a;
            m = c / p;
            AT(ua, i) = 1 / p;
            AT(ub, i) = b;
            AT(sw, i) = 0;
            anew = an - m * b;
            bnew = bn;
        } else {  /* rows i and i + 1 interchanged */
            const W p = fabs(c) < tol ? copysign(tol, c) : c;
            m = a / p;
            AT(ua, i) = 1 / p;
            AT(ub, i) = an;
            AT(sw, i) = 1;
            anew = b - m * an;
            dd = bn;
            bnew = -m * bn;
        }
        AT(ud, i) = dd;
        AT(lc, i) = m;
        a = anew;
        b = bnew;
    }
    AT(ua, n - 1) = 1 / (fabs(a) < tol ? copysign(tol, a) : a);
    AT(ub, n - 1) = AT(ud, n - 1) = 0;
    /* three rounds: forward P L y = s z (s: the last round's scale; z a fixed start in the
       first), back U x = y; CH steps' loads at a time (each store could alias a later
       load: the compiler keeps them in order), x scaled by its largest entry */
    W s = 1, ss = 0, top = 0;
    for (int it = 0; it < 3; ++it) {
        W yi = it ? s * AT(z, 0) : start(0, k);
        for (int i0 = 0; i0 < n - 1; i0 += CH) {
            W cs[CH], cl[CH], cy[CH];
#pragma unroll
            for (int u = 0; u < CH; ++u) {
                const int i = min(i0 + u, n - 2);
                cs[u] = AT(sw, i);
                cl[u] = AT(lc, i);
                cy[u] = it ? s * AT(z, i + 1) : start(i + 1, k);
            }
#pragma unroll
            for (int u = 0; u < CH; ++u) {
                const int i = i0 + u;
                if (i < n - 1) {
                    const W lo = cs[u] != 0 ? cy[u] : yi;
                    yi = cs[u] != 0 ? yi - cl[u] * cy[u] : cy[u] - cl[u] * yi;
                    AT(z, i) = lo;
                }
            }
        }
        AT(z, n - 1) = yi;
        W x1 = 0, x2 = 0, big = 0;
        ss = 0;
        top = 0;
        for (int i0 = n - 1; i0 >= 0; i0 -= CH) {
            W cy[CH], cb[CH], cd[CH], ca[CH];
#pragma unroll
            for (int u = 0; u < CH; ++u) {
                const int i = max(i0 - u, 0);
                cy[u] = AT(z, i);
                cb[u] = AT(ub, i);
                cd[u] = AT(ud, i);
                ca[u] = AT(ua, i);
            }
#pragma unroll
            for (int u = 0; u < CH; ++u) {
                const int i = i0 - u;
                if (i >= 0) {
                    const W x = (cy[u] - cb[u] * x1 - cd[u] * x2) * ca[u];
                    AT(z, i) = x;
                    big = fmax(big, fabs(x));
                    ss += x * x;
                    top = fabs(x) > fabs(top) ? x : top;
                    x2 = x1;
                    x1 = x;
                }
            }
        }
        s = big > 0 ? 1 / big : 1;
    }
    /* unit 2-norm, the largest entry positive (ss and top of the last round, unscaled) */
    s = copysign(1 / sqrt(ss), top);
    for (int i = 0; i < n; ++i)
        AT(z, i) *= s;
#undef AT
}
