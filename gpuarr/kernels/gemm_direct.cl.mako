## GEMM without local memory, for CPUs: C[m, n] = alpha * sum_k A[m, k] * B[k, n] + beta * C.
## A work-item computes mwi rows x nvec vectors of nwi columns of C: per k it loads nvec
## vectors of B's row k (unit stride along n) and broadcasts mwi elements of A into them, the
## shape of a BLAS micro-kernel, which the CPU runs as vector FMAs. At the ragged edges each
## vector window shifts into the matrix (rows past M repeat the last one) and stores skip the
## columns and rows other vectors or work-items own; only N < nwi takes a scalar loop.
## Batched over dimension 2 of the launch. (A GEMV of a column-major matrix is this kernel on
## the transposed problem: mwi = 1, long rows of nvec vectors that walk each column once.)
## With `panel`, B comes in panels of nwi columns (blas._panels: b_sk = nwi, b_sn the distance
## of two panels, zeros past N): a work-item's loads walk one contiguous stretch, where a
## large B's rows are pages apart (a load a page wears out the TLB); windows never shift.
## Inputs: name; dtype ('float32' or 'float64'); mwi, nwi (a vector width: 2, 4, 8, 16);
##   nvec (vectors per work-item along n, default 1); c_unit (C has unit stride along n:
##   vector stores); use_beta (read C); batch2 (two batch levels, as kernels/gemm.cl.mako's);
##   panel (B in panels, above; not with batch2).
## Arguments: as kernels/gemm.cl.mako (M, N, K, [NB1,] alpha, beta, then A, B, C each as
##   pointer, offset, two strides and a batch stride [and an inner one]; B's stride along n
##   must be 1).
## Defines: __kernel void ${name}(...)
<%page args="batch2=0, nvec=1, panel=0"/>\
<%! import gpuarr.kernels.cltypes as t %>\
<%
    T = t.ctype(dtype)
    V = T + str(nwi)
    inner = lambda arg: f', const {arg}' if batch2 else ''
%>\
${t.fp64_pragma([dtype])}
#pragma OPENCL FP_CONTRACT OFF

__kernel void ${name}(const int M, const int N, const int K${inner('int NB1')},
                      const ${T} alpha, const ${T} beta,
                      __global const ${T} *A, const long a_off, const long a_sm, const long a_sk,
                      const long a_sb${inner('long a_sb1')},
                      __global const ${T} *B, const long b_off, const long b_sk, const long b_sn,
                      const long b_sb${inner('long b_sb1')},
                      __global ${T} *C, const long c_off, const long c_sm, const long c_sn,
                      const long c_sb${inner('long c_sb1')})
{
    const int m0 = get_global_id(0) * ${mwi}, n0 = get_global_id(1) * ${nwi * nvec};
% if batch2:
    const long p = get_global_id(2), p0 = p / NB1, p1 = p % NB1;
    A += a_off + p0 * a_sb + p1 * a_sb1;
    B += b_off + p0 * b_sb + p1 * b_sb1;
    C += c_off + p0 * c_sb + p1 * c_sb1;
% else:
    const long batch = get_global_id(2);
    A += a_off + batch * a_sb;
    B += b_off + batch * b_sb;
    C += c_off + batch * c_sb;
% endif
    if (${'1' if panel else 'N >= %d' % nwi}) {
        // At the ragged edges a vector window shifts left into the matrix and rows past M
        // repeat row M - 1: every work-item runs the vector loop; stores skip what others own.
% for v in range(nvec):
% if panel:
        const int s${v} = n0 + ${v * nwi}, nw${v} = s${v};
        __global const ${T} *bc${v} = B + (long)(s${v} / ${nwi}) * b_sn;
% else:
        const int s${v} = n0 + ${v * nwi}, nw${v} = min(s${v}, N - ${nwi});
        __global const ${T} *bc${v} = B + nw${v};
% endif
% endfor
% for i in range(mwi):
% for v in range(nvec):
        ${V} c${i}_${v} = 0;
% endfor
        __global const ${T} *a${i} = A + min(m0 + ${i}, M - 1) * a_sm;
% endfor
        for (int k = 0; k < K; ++k) {
% for v in range(nvec):
            const ${V} b${v} = vload${nwi}(0, bc${v} + k * b_sk);
% endfor
% for i in range(mwi):
            const ${V} a${i}k = (${V})(a${i}[k * a_sk]);
% for v in range(nvec):
            c${i}_${v} = fma(a${i}k, b${v}, c${i}_${v});
% endfor
% endfor
        }
% for i in range(mwi):
        if (m0 + ${i} < M) {
            __global ${T} *row = C + (m0 + ${i}) * c_sm;
% for v in range(nvec):
% if c_unit:
            if (nw${v} == s${v}${' && s%d + %d <= N' % (v, nwi) if panel else ''}) {
                ${V} r = alpha * c${i}_${v};
% if use_beta:
                r += beta * vload${nwi}(0, row + s${v});
% endif
                vstore${nwi}(r, 0, row + s${v});
            } else
% endif
            {
% for j in range(nwi):
                if (nw${v} + ${j} >= s${v}${' && s%d + %d < N' % (v, j) if panel else ''})
                    row[(nw${v} + ${j}) * c_sn] = alpha * c${i}_${v}.s${'%x' % j}${' + beta * row[(nw%d + %d) * c_sn]' % (v, j) if use_beta else ''};
% endfor
            }
% endfor
        }
% endfor
        return;
    }
% if not panel:
    // fewer columns than a vector: one element at a time
    for (int m = m0; m < min(m0 + ${mwi}, M); ++m)
        for (int n = n0; n < min(n0 + ${nwi * nvec}, N); ++n) {
            ${T} s = 0;
            for (int k = 0; k < K; ++k)
                s = fma(A[m * a_sm + k * a_sk], B[k * b_sk + n], s);
            const long at = m * c_sm + n * c_sn;
            C[at] = alpha * s${' + beta * C[at]' if use_beta else ''};
        }
% endif
}
