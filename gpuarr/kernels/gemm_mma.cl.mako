## float64 GEMM on NVIDIA FP64 tensor cores (DMMA, inline PTX mma.sync; sm_80+, NVIDIA only):
## C[m, n] = alpha * sum_k A[m, k] * B[k, n] + beta * C[m, n], any strides, batched over
## dimension 2 of the launch. A work-group of wm x wn warps computes a bm x bn tile of C: it
## stages bk-deep slices of A and B in local memory (the next slice is fetched into
## registers while this one feeds the tensor cores), and each warp computes a
## (bm / wm) x (bn / wn) tile as a grid of mma tiles whose accumulators stay in registers.
## Inputs:
##   name        kernel name
##   shape       the mma instruction's shape: 'm8n8k4' (sm_80+) or 'm16n8k4', 'm16n8k8',
##               'm16n8k16' (sm_90)
##   bm bn bk    work-group tile and k step; wm wn the work-group's warps along m and n
##   nbuf        2: two local memory buffers, one barrier per slice; 1: one buffer (twice
##               the k step in the same local memory), two barriers per slice
##   pad         local memory padding per row (doubles): 4 mod 16 makes a warp's fragment
##               reads (8 rows x 4 k of one buffer) free of bank conflicts
##   a_fast      'm' or 'k': the index of A along which neighbouring work-items load
##   b_fast      'k' or 'n': the same for B
##   edge_mn     M or N is not a multiple of the tile: loads clamp their row and column into
##               the matrix (the outputs they feed are not stored), stores are checked
##   edge_k      K is not a multiple of bk: elements past K load as 0
##   use_beta    read C (beta != 0)
## Arguments: M, N, K, alpha, beta, A pointer, offset, stride m, stride k, stride batch;
## B pointer, offset, stride k, stride n, stride batch; C pointer, offset, stride m,
## stride n, stride batch. Offsets and strides count elements.
## Defines: __kernel void ${name}(...)
<%page args="nbuf=2"/>\
<%
    mm_, nn_, kk_ = (int(x) for x in shape[1:].replace('n', ' ').replace('k', ' ').split())
    assert shape in ('m8n8k4', 'm16n8k4', 'm16n8k8', 'm16n8k16'), shape
    hm = mm_ // 8  # 8-row halves of an mma tile
    a_regs, b_regs, c_regs = hm * kk_ // 4, kk_ // 4, 2 * hm
    threads = 32 * wm * wn
    tm, tn = bm // wm, bn // wn  # a warp's tile
    assert bm % wm == 0 and bn % wn == 0 and tm % mm_ == 0 and tn % 8 == 0, "warp tiles"
    assert bk % kk_ == 0, "bk must be a multiple of the mma k"
    mi_n, ni_n = tm // mm_, tn // 8  # mma tiles per warp
    a_loads = -(-bm * bk // threads)
    b_loads = -(-bk * bn // threads)
    a_part = bm * bk % threads != 0
    b_part = bk * bn % threads != 0
    clamp = lambda i, n: f'min({i}, {n} - 1)' if edge_mn else f'({i})'
    la, lb = bm + pad, bn + pad  # local row lengths
    # register r of a lane's A fragment: row g + 8 * (r % hm), k t + 4 * (r // hm);
    # of B: k t + 4 * r, column g; of C: row g + 8 * (r // 2), column 2 t + r % 2
    a_row = lambda r: 8 * (r % hm)
    a_k = lambda r: 4 * (r // hm)
    regs = lambda n, start: ', '.join(f'%{start + i}' for i in range(n))
%>\
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

__kernel __attribute__((reqd_work_group_size(${threads}, 1, 1)))
void ${name}(const int M, const int N, const int K, const double alpha, const double beta,
             __global const double *A, const long a_off, const long a_sm, const long a_sk,
             const long a_sb,
             __global const double *B, const long b_off, const long b_sk, const long b_sn,
             const long b_sb,
             __global double *C, const long c_off, const long c_sm, const long c_sn,
             const long c_sb)
{
    __local double Alm[${nbuf}][${bk}][${la}];
    __local double Blm[${nbuf}][${bk}][${lb}];
    const int tid = get_local_id(0);
    const int lane = tid % 32, warp = tid / 32;
    const int g = lane / 4, t = lane % 4;
    // this warp's tile within the work-group's, and its lane's first row and column there
    const int wr = (warp / ${wn}) * ${tm} + g, wc = (warp % ${wn}) * ${tn} + g;
    const int bm0 = get_group_id(0) * ${bm}, bn0 = get_group_id(1) * ${bn};
    const long batch = get_global_id(2);
    A += a_off + batch * a_sb;
    B += b_off + batch * b_sb;
    C += c_off + batch * c_sb;
% for i in range(mi_n):
% for j in range(ni_n):
    double ${', '.join(f'c{i}_{j}_{r} = 0' for r in range(c_regs))};
% endfor
% endfor
## Each work-item loads elements e = tid + r * threads of the A and B slices: their tile
## coordinates and global offsets (but for the k step) are worked out once, here.
% for r in range(a_loads):
% if a_fast == 'm':
    const int a_mm${r} = (tid + ${r * threads}) % ${bm}, a_kk${r} = (tid + ${r * threads}) / ${bm};
% else:
    const int a_kk${r} = (tid + ${r * threads}) % ${bk}, a_mm${r} = (tid + ${r * threads}) / ${bk};
% endif
    const long a_at${r} = ${clamp('bm0 + a_mm%d' % r, 'M')} * a_sm + a_kk${r} * a_sk;
% endfor
% for r in range(b_loads):
% if b_fast == 'n':
    const int b_nn${r} = (tid + ${r * threads}) % ${bn}, b_kk${r} = (tid + ${r * threads}) / ${bn};
% else:
    const int b_kk${r} = (tid + ${r * threads}) % ${bk}, b_nn${r} = (tid + ${r * threads}) / ${bk};
% endif
    const long b_at${r} = b_kk${r} * b_sk + ${clamp('bn0 + b_nn%d' % r, 'N')} * b_sn;
% endfor
    double ${', '.join([f'ra{r}' for r in range(a_loads)] + [f'rb{r}' for r in range(b_loads)])};
<%def name="fetch(k0)">\
## this work-item's A and B elements of the slice at ${k0}, into registers
        {
            const long ak = (long)(${k0}) * a_sk, bk = (long)(${k0}) * b_sk;
% for r in range(a_loads):
            ${'if (tid + %d < %d)' % (r * threads, bm * bk) if a_part else ''}
% if edge_k:
            ra${r} = ${k0} + a_kk${r} < K ? A[a_at${r} + ak] : 0.0;
% else:
            ra${r} = A[a_at${r} + ak];
% endif
% endfor
% for r in range(b_loads):
            ${'if (tid + %d < %d)' % (r * threads, bk * bn) if b_part else ''}
% if edge_k:
            rb${r} = ${k0} + b_kk${r} < K ? B[b_at${r} + bk] : 0.0;
% else:
            rb${r} = B[b_at${r} + bk];
% endif
% endfor
        }
</%def>\
<%def name="stage(buf)">\
## the registers of fetch() into local memory buffer ${buf}
% for r in range(a_loads):
        ${'if (tid + %d < %d)' % (r * threads, bm * bk) if a_part else ''}
            Alm[${buf}][a_kk${r}][a_mm${r}] = ra${r};
% endfor
% for r in range(b_loads):
        ${'if (tid + %d < %d)' % (r * threads, bk * bn) if b_part else ''}
            Blm[${buf}][b_kk${r}][b_nn${r}] = rb${r};
% endfor
</%def>\
<%def name="multiply(buf)">\
## this warp's mma tiles += its rows of the slice in buffer ${buf} x its columns
        {
            // lane (g, t) reads k rows t + 4 r
            __local const double (*Al)[${la}] = Alm[${buf}] + t;
            __local const double (*Bl)[${lb}] = Blm[${buf}] + t;
% for k in range(0, bk, kk_):
        {
% for i in range(mi_n):
            const double ${', '.join(f'a{i}_{r} = Al[{k + a_k(r)}][wr + {i * mm_ + a_row(r)}]' for r in range(a_regs))};
% endfor
% for j in range(ni_n):
            const double ${', '.join(f'b{j}_{r} = Bl[{k + 4 * r}][wc + {j * 8}]' for r in range(b_regs))};
% endfor
% for i in range(mi_n):
% for j in range(ni_n):
            asm volatile("mma.sync.aligned.${shape}.row.col.f64.f64.f64.f64 "
                         "{${regs(c_regs, 0)}}, {${regs(a_regs, c_regs)}}, "
                         "{${regs(b_regs, c_regs + a_regs)}}, {${regs(c_regs, 0)}};"
                         : ${', '.join(f'"+d"(c{i}_{j}_{r})' for r in range(c_regs))}
                         : ${', '.join([f'"d"(a{i}_{r})' for r in range(a_regs)] + [f'"d"(b{j}_{r})' for r in range(b_regs)])});
% endfor
% endfor
        }
% endfor
        }
</%def>\
% if nbuf == 2:
    // slice s is staged in buffer s % 2: while one buffer feeds the tensor cores, the next
    // slice is fetched from global memory and then written into the other
${fetch('0')}\
${stage('0')}\
    barrier(CLK_LOCAL_MEM_FENCE);
    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += ${bk}) {
        const int more = k0 + ${bk} < K;
        if (more) {
${fetch('k0 + ' + str(bk))}\
        }
${multiply('buf')}\
        if (more) {
            buf ^= 1;
${stage('buf')}\
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
% else:
    // the next slice is fetched from global memory while this one is multiplied
${fetch('0')}\
    for (int k0 = 0; k0 < K; k0 += ${bk}) {
${stage('0')}\
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k0 + ${bk} < K) {
${fetch('k0 + ' + str(bk))}\
        }
${multiply('0')}\
        barrier(CLK_LOCAL_MEM_FENCE);
    }
% endif
% for i in range(mi_n):
% for j in range(ni_n):
% for r in range(c_regs):
    {
        const int gm = bm0 + wr + ${i * mm_ + 8 * (r // 2)}, gn = bn0 + wc - g + 2 * t + ${j * 8 + r % 2};
% if edge_mn:
        if (gm < M && gn < N) {
% else:
        {
% endif
            const long at = gm * c_sm + gn * c_sn;
% if use_beta:
            C[at] = alpha * c${i}_${j}_${r} + beta * C[at];
% else:
            C[at] = alpha * c${i}_${j}_${r};
% endif
        }
    }
% endfor
% endfor
% endfor
}
