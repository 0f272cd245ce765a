## GEMM: C[m, n] = alpha * sum_k A[m, k] * B[k, n] + beta * C[m, n], any strides (so
## transposes are strides), batched over dimension 2 of the launch (strided batches).
## A work-group computes an mwg x nwg tile of C: it stages kwg-deep slices of A and B in
## local memory (loaded by all its work-items, coalesced along whichever index of each
## matrix has unit stride), and each of its mdimc x ndimc work-items accumulates
## (mwg / mdimc) x (nwg / ndimc) outputs in registers.
## Inputs:
##   name        kernel name
##   dtype       storage dtype of A, B, C; acc_dtype the accumulator's (float16: float32;
##               integers and bool: int32 or int64, wrapping as numpy's integer matmul)
##   mwg nwg kwg work-group tile and k step; mdimc ndimc the work-group's shape
##   a_fast      'm' or 'k': the index of A along which neighbouring work-items load
##   b_fast      'k' or 'n': the same for B
##   c_fast      'm' or 'n': the index of C neighbouring work-items store along
##   edge_mn     M or N is not a multiple of the tile: loads clamp their row and column
##               into the matrix (the outputs they feed are not stored), stores are checked
##   edge_k      K is not a multiple of kwg: elements past K load as 0
##   use_beta    read C (beta != 0)
##   pad         local memory padding per row (bank conflicts)
##   vw          a work-item's rows are runs of vw at tm * vw + r * mdimc * vw (columns
##               alike), read from local memory as vectors of vw (1: rows tm + i * mdimc);
##               neighbouring work-items read neighbouring vectors (no bank conflicts)
##   prefetch    fetch the next k slice into registers while multiplying this one
##   db          two local-memory buffers: the next slice is staged into one while the other
##               is read, so each slice needs one barrier instead of two (needs prefetch)
##   unroll      unroll the loop over a slice's k (a gain or a loss depending on the tile)
##   batch2      two batch levels (broadcast batch dimensions that do not collapse into
##               one): batch p of the launch is (p / NB1, p % NB1), each matrix has a stride
##               per level
## Arguments: M, N, K, [NB1,] alpha, beta, A pointer, offset, stride m, stride k, stride
## batch[, stride inner batch]; B pointer, offset, stride k, stride n, stride batch[, ...];
## C pointer, offset, stride m, stride n, stride batch[, ...]. Offsets and strides count
## elements.
## Defines: __kernel void ${name}(...)
<%page args="db=0, unroll=0, batch2=0"/>\
<%! import gpuarr.kernels.cltypes as t %>\
<%
    T = t.ctype(acc_dtype)
    S = t.storage(dtype)
    load = lambda ptr, idx: t.convert(dtype, acc_dtype, t.load(dtype, ptr, idx))
    floating = acc_dtype.startswith('float')
    # the rows and columns of a work-item's outputs within the tile
    row = lambda i: f'{i // vw * mdimc * vw + i % vw} + tm * {vw}'
    col = lambda j: f'{j // vw * ndimc * vw + j % vw} + tn * {vw}'
    TV = T + str(vw) if vw > 1 else T
    mwi, nwi = mwg // mdimc, nwg // ndimc
    assert mwi % vw == 0 and nwi % vw == 0 and pad % vw == 0, "vw must divide mwi, nwi, pad"
    threads = mdimc * ndimc
    a_loads = -(-mwg * kwg // threads)
    b_loads = -(-kwg * nwg // threads)
    # where a tile has fewer elements than loads (a one-column B), the extra ones skip
    a_part = mwg * kwg % threads != 0
    b_part = kwg * nwg % threads != 0
    assert prefetch or not db, "db needs prefetch"
    clamp = lambda i, n: f'min({i}, {n} - 1)' if edge_mn else f'({i})'
    nbuf = 2 if db else 1
    inner = lambda arg: f', const {arg}' if batch2 else ''
%>\
${t.fp64_pragma([dtype, acc_dtype])}
#pragma OPENCL FP_CONTRACT OFF

__kernel __attribute__((reqd_work_group_size(${threads}, 1, 1)))
void ${name}(const int M, const int N, const int K${inner('int NB1')},
             const ${T} alpha, const ${T} beta,
             __global const ${S} *A, const long a_off, const long a_sm, const long a_sk,
             const long a_sb${inner('long a_sb1')},
             __global const ${S} *B, const long b_off, const long b_sk, const long b_sn,
             const long b_sb${inner('long b_sb1')},
             __global ${S} *C, const long c_off, const long c_sm, const long c_sn,
             const long c_sb${inner('long c_sb1')})
{
    // declared as vectors so that vector reads are aligned; written as scalars
    __local ${TV} Alm_v[${nbuf}][${kwg}][${(mwg + pad) // vw}];
    __local ${TV} Blm_v[${nbuf}][${kwg}][${(nwg + pad) // vw}];
    const int tid = get_local_id(0);
% if c_fast == 'm':
    const int tm = tid % ${mdimc}, tn = tid / ${mdimc};
% else:
    const int tm = tid / ${ndimc}, tn = tid % ${ndimc};
% endif
    const int bm = get_group_id(0) * ${mwg}, bn = get_group_id(1) * ${nwg};
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
    ${T} acc[${mwi}][${nwi}];
% for i in range(mwi):
% for j in range(nwi):
    acc[${i}][${j}] = 0;
% endfor
% endfor
## Each work-item loads elements e = tid + r * threads of the A and B slices: their tile
## coordinates and global offsets (but for the k step) are worked out once, here.
% for r in range(a_loads):
% if a_fast == 'm':
    const int a_mm${r} = (tid + ${r * threads}) % ${mwg}, a_kk${r} = (tid + ${r * threads}) / ${mwg};
% else:
    const int a_kk${r} = (tid + ${r * threads}) % ${kwg}, a_mm${r} = (tid + ${r * threads}) / ${kwg};
% endif
    const long a_at${r} = ${clamp('bm + a_mm%d' % r, 'M')} * a_sm + a_kk${r} * a_sk;
% endfor
% for r in range(b_loads):
% if b_fast == 'n':
    const int b_nn${r} = (tid + ${r * threads}) % ${nwg}, b_kk${r} = (tid + ${r * threads}) / ${nwg};
% else:
    const int b_kk${r} = (tid + ${r * threads}) % ${kwg}, b_nn${r} = (tid + ${r * threads}) / ${kwg};
% endif
    const long b_at${r} = b_kk${r} * b_sk + ${clamp('bn + b_nn%d' % r, 'N')} * b_sn;
% endfor
<%def name="fetch(k0)">\
## the A and B elements of this work-item for the slice at ${k0}, into registers
        {
            const long ak = (long)(${k0}) * a_sk, bk = (long)(${k0}) * b_sk;
% for r in range(a_loads):
            ${'if (tid + %d < %d)' % (r * threads, mwg * kwg) if a_part else ''}
% if edge_k:
            ra${r} = ${k0} + a_kk${r} < K ? ${load('A', f'a_at{r} + ak')} : 0;
% else:
            ra${r} = ${load('A', f'a_at{r} + ak')};
% endif
% endfor
% for r in range(b_loads):
            ${'if (tid + %d < %d)' % (r * threads, kwg * nwg) if b_part else ''}
% if edge_k:
            rb${r} = ${k0} + b_kk${r} < K ? ${load('B', f'b_at{r} + bk')} : 0;
% else:
            rb${r} = ${load('B', f'b_at{r} + bk')};
% endif
% endfor
        }
</%def>\
<%def name="stage(buf)">\
## the registers of fetch() into local memory buffer ${buf}
% for r in range(a_loads):
        ${'if (tid + %d < %d)' % (r * threads, mwg * kwg) if a_part else ''}
            Alm[${buf}][a_kk${r}][a_mm${r}] = ra${r};
% endfor
% for r in range(b_loads):
        ${'if (tid + %d < %d)' % (r * threads, kwg * nwg) if b_part else ''}
            Blm[${buf}][b_kk${r}][b_nn${r}] = rb${r};
% endfor
</%def>\
<%def name="multiply(buf)">\
## acc += this work-item's rows of A x columns of B, from local memory buffer ${buf}
% if unroll:
        #pragma unroll
% endif
        for (int kk = 0; kk < ${kwg}; ++kk) {
            ${T} a[${mwi}], b[${nwi}];
% if vw > 1:
% for r in range(mwi // vw):
            const ${TV} av${r} = Alm_v[${buf}][kk][${r * mdimc} + tm];
% for c in range(vw):
            a[${r * vw + c}] = av${r}.s${c};
% endfor
% endfor
% for r in range(nwi // vw):
            const ${TV} bv${r} = Blm_v[${buf}][kk][${r * ndimc} + tn];
% for c in range(vw):
            b[${r * vw + c}] = bv${r}.s${c};
% endfor
% endfor
% else:
% for i in range(mwi):
            a[${i}] = Alm[${buf}][kk][${row(i)}];
% endfor
% for j in range(nwi):
            b[${j}] = Blm[${buf}][kk][${col(j)}];
% endfor
% endif
% for i in range(mwi):
% for j in range(nwi):
% if floating:
            acc[${i}][${j}] = fma(a[${i}], b[${j}], acc[${i}][${j}]);
% else:
            acc[${i}][${j}] += a[${i}] * b[${j}];
% endif
% endfor
% endfor
        }
</%def>\
    __local ${T} (*Alm)[${kwg}][${mwg + pad}] = (__local ${T} (*)[${kwg}][${mwg + pad}])Alm_v;
    __local ${T} (*Blm)[${kwg}][${nwg + pad}] = (__local ${T} (*)[${kwg}][${nwg + pad}])Blm_v;
    ${T} ${', '.join([f'ra{r}' for r in range(a_loads)] + [f'rb{r}' for r in range(b_loads)])};
% if db:
    // slice s is staged in buffer s % 2: while one buffer is read, the next slice is
    // fetched from global memory and then written into the other
${fetch('0')}\
${stage('0')}\
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k0 = 0; k0 < K; k0 += ${2 * kwg}) {
        if (k0 + ${kwg} < K) {
${fetch('k0 + ' + str(kwg))}\
        }
${multiply('0')}\
        if (k0 + ${kwg} >= K)
            break;
${stage('1')}\
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k0 + ${2 * kwg} < K) {
${fetch('k0 + ' + str(2 * kwg))}\
        }
${multiply('1')}\
${stage('0')}\
        barrier(CLK_LOCAL_MEM_FENCE);
    }
% elif prefetch:
    // the next slice is fetched from global memory while this one is multiplied
${fetch('0')}\
    for (int k0 = 0; k0 < K; k0 += ${kwg}) {
${stage('0')}\
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k0 + ${kwg} < K) {
${fetch('k0 + ' + str(kwg))}\
        }
${multiply('0')}\
        barrier(CLK_LOCAL_MEM_FENCE);
    }
% else:
    for (int k0 = 0; k0 < K; k0 += ${kwg}) {
${fetch('k0')}\
${stage('0')}\
        barrier(CLK_LOCAL_MEM_FENCE);
${multiply('0')}\
        barrier(CLK_LOCAL_MEM_FENCE);
    }
% endif
% for i in range(mwi):
% for j in range(nwi):
    {
        const int gm = bm + ${row(i)}, gn = bn + ${col(j)};
% if edge_mn:
        if (gm < M && gn < N) {
% else:
        {
% endif
            const long at = gm * c_sm + gn * c_sn;
% if use_beta:
            const ${T} r = alpha * acc[${i}][${j}] + beta * ${load('C', 'at')};
% else:
            const ${T} r = alpha * acc[${i}][${j}];
% endif
            ${t.store(dtype, 'C', 'at', 'r', acc_dtype)}
        }
    }
% endfor
% endfor
}
