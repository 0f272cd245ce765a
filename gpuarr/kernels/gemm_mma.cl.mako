## GEMM on NVIDIA tensor cores (inline PTX mma.sync; sm_80+, NVIDIA only):
## C[m, n] = alpha * sum_k A[m, k] * B[k, n] + beta * C[m, n], any strides, batched over
## dimension 2 of the launch. A work-group of wm x wn warps computes a bm x bn tile of C: it
## stages bk-deep slices of A and B in local memory, and each warp computes a
## (bm / wm) x (bn / wn) tile as a grid of mma tiles whose accumulators stay in registers.
## Inputs:
##   name        kernel name
##   prec        'f64': float64 in and out, FP64 tensor cores (DMMA, IEEE products);
##               'tf32': float32 in and out, operands rounded to TF32 (10-bit mantissa);
##               '3xtf32': float32, each operand split into a TF32 high part and a TF32
##               residual, hi*hi + hi*lo + lo*hi accumulated in float32 (float32 accuracy)
##   shape       the mma instruction's shape: f64 'm8n8k4' (sm_80+), 'm16n8k4', 'm16n8k8',
##               'm16n8k16' (sm_90); tf32 'm16n8k4', 'm16n8k8'
##   bm bn bk    work-group tile and k step; wm wn the work-group's warps along m and n
##   a_mk        A's slice is kept as [m][k] in local memory (A's unit stride is along k),
##               else [k][m]; b_nk: B's as [n][k], else [k][n]
##   swizzle     how a warp's fragment reads are kept free of bank conflicts: False pads each
##               row; True keeps rows unpadded and XORs the column index with a function of
##               the row (less local memory: more or deeper slices fit)
##   vec         elements per global load (1, 2 or 4) along each operand's unit-stride index;
##               vec > 1 needs unit strides there and offsets and other strides multiples
##               of vec
##   copy        'regs': the next slice is loaded into registers while this one is multiplied,
##               then stored into the other of two local buffers; 'async': cp.async copies
##               global -> local without registers into a ring of `stages` buffers
##               (needs vec * element size of 4, 8 or 16 bytes)
##   stages      local buffers of the ring ('async'; 'regs' uses 2, 3 with sync 'mbar')
##   pipeline    load each k step's fragments while the previous k step's products run,
##               the next slice's first ones between the halves of the slice's last products
##   sync        (optional, default 'bar') 'mbar', where copy is 'regs' and pipelined (else
##               ignored): three buffers; a slice is written after the first products of
##               the slice before it and awaited on its buffer's mbarrier (sm_90) instead of
##               a work-group barrier, so that no warp waits for the others to reach one
##   edge_mn     M or N is not a multiple of the tile: loads clamp into the matrix (the
##               outputs they feed are not stored), stores are checked
##   edge_vec    (with edge_mn) M or N is not a multiple of vec along an operand whose
##               unit-stride index is m or n: its chunks there may cross the edge and are
##               checked in every slice, else they clamp whole (N - vec), unchecked
##   edge_k      K is not a multiple of bk: elements past K load as 0
##   use_beta    read C (beta != 0)
##   group_m     0: work-group (i, j) computes tile (i, j); g > 0: work-groups run down bands
##               of g tile rows, column after column, so that the ones in flight together
##               share their slices of A and B in the L2 cache
## Arguments: M, N, K, alpha, beta, A pointer, offset, stride m, stride k, stride batch;
## B pointer, offset, stride k, stride n, stride batch; C pointer, offset, stride m,
## stride n, stride batch. Offsets and strides count elements.
## Defines: __kernel void ${name}(...)
<%
    assert prec in ('f64', 'tf32', '3xtf32'), prec
    f64 = prec == 'f64'
    T = 'double' if f64 else 'float'
    size = 8 if f64 else 4
    mm_, nn_, kk_ = (int(x) for x in shape[1:].replace('n', ' ').replace('k', ' ').split())
    assert shape in (('m8n8k4', 'm16n8k4', 'm16n8k8', 'm16n8k16') if f64
                     else ('m16n8k4', 'm16n8k8')), shape
    hm = mm_ // 8  # 8-row halves of an mma tile
    # registers per lane: one element each (fragment layouts of f64 and tf32 agree)
    a_regs, b_regs, c_regs = hm * kk_ // 4, kk_ // 4, 2 * hm
    threads = 32 * wm * wn
    tm, tn = bm // wm, bn // wn  # a warp's tile
    assert bm % wm == 0 and bn % wn == 0 and tm % mm_ == 0 and tn % 8 == 0, "warp tiles"
    assert bk % kk_ == 0, "bk must be a multiple of the mma k"
    mi_n, ni_n = tm // mm_, tn // 8  # mma tiles per warp
    # sync 'mbar' (copy 'regs', pipelined): mbarriers instead of work-group barriers, and a
    # third buffer, so that a slice is written while the one before it may still be read
    sync = context.get('sync', 'bar')
    assert sync in ('bar', 'mbar'), "sync: 'bar' or 'mbar'"
    mbar = sync == 'mbar' and copy == 'regs' and pipeline
    nbuf = stages if copy == 'async' else 3 if mbar else 2
    assert copy in ('regs', 'async') and nbuf >= 2
    assert vec in (1, 2, 4) and (copy == 'regs' or vec * size in (4, 8, 16))

    def padded(n, fast_fragment):
        # Row length in elements. A warp reads lanes (g, t) = (lane / 4, lane % 4) at
        # row g, column t of an [m][k] slice (fast_fragment) or row t, column g of a [k][m]
        # one; the rows must fall on banks that keep the 32 (f32) or 16 (a phase of f64)
        # reads apart, and stay 16-byte aligned for the vector and async copies.
        want = (4, 8) if fast_fragment and not f64 else (4, 8) if f64 else (8, 16)
        p = n
        while p % want[1] != want[0] or (p * size) % 16:
            p += 1
        return p

    # 128 bytes of banks hold P elements
    P = 16 if f64 else 32

    def swizzled(row, k_rows):
        # XOR mask (C expression) of the column index of `row` in an unpadded layout. Rows of
        # k ([k][m], [k][n]; lanes read rows t, 8 columns g): rows t spread over 4 distinct
        # P/4-column groups. Rows of m or n (k-contiguous; lanes read rows g, columns t):
        # rows g spread over distinct 4-column groups, rows sharing a bank line counted once.
        if k_rows:
            return f'({P // 4} * (({row}) % 4))'
        rp, n_sw = max(1, P // bk), min(bk // 4, 4 if f64 else 8)
        return f'(4 * ((({row}) / {rp}) % {n_sw}))'

    if swizzle:
        la, lb = (bk if a_mk else bm), (bk if b_nk else bn)
        assert (a_mk or (bm // wm) % P == 0) and (b_nk or (bn // wn) % P == 0), "warp tiles"
    else:
        la = padded(bk if a_mk else bm, a_mk)
        lb = padded(bk if b_nk else bn, b_nk)
    a_rows, b_rows = (bm, bk) if a_mk else (bk, bm), (bn, bk) if b_nk else (bk, bn)
    # global -> local copies in chunks of vec elements along the unit-stride index
    a_fastn, b_fastn = (bk if a_mk else bm), (bk if b_nk else bn)
    assert a_fastn % vec == 0 and b_fastn % vec == 0
    a_chunks, b_chunks = bm * bk // vec, bk * bn // vec
    a_loads, b_loads = -(-a_chunks // threads), -(-b_chunks // threads)
    a_part, b_part = a_chunks % threads != 0, b_chunks % threads != 0
    V = T if vec == 1 else f'{T}{vec}'
    regs = lambda n, start: ', '.join(f'%{start + i}' for i in range(n))
    # register r of a lane's A fragment: row g + 8 * (r % hm), k t + 4 * (r // hm);
    # of B: k t + 4 * r, column g; of C: row g + 8 * (r // 2), column 2 t + r % 2
    a_row = lambda r: 8 * (r % hm)
    a_k = lambda r: 4 * (r // hm)
    # A's fragment element at row wr + g + mo, k t + ko of the slice; B's at k t + ko,
    # column wc + g + no (mo, no, ko: multiples of 8, 8, 4). Swizzled, the column is split
    # into what the XOR leaves alone and a per-work-item part the compiler computes once.
    def frag_at(arr, x0, xo, ko, x_rows):
        if not swizzle:
            x, k = f'{x0} + g + {xo}', f't + {ko}'
            return f'{arr}[{x}][{k}]' if x_rows else f'{arr}[{k}][{x}]'
        if x_rows:
            return f'{arr}[{x0} + g + {xo}][t + ({ko} ^ {arr[0].lower()}_sw)]'
        hi, lo = xo - xo % P, xo % P
        return f'{arr}[t + {ko}][{x0} + {hi} + (({lo} + g) ^ {arr[0].lower()}_sw)]'

    a_at = lambda mo, ko: frag_at('Al', 'wr', mo, ko, a_mk)
    b_at = lambda ko, no: frag_at('Bl', 'wc', no, ko, b_nk)

    ragged = edge_mn and edge_vec and vec > 1  # chunks along m or n checked

    def clamped(x, lim):
        # the first row (column) of a chunk along m (n) of vec elements: past the edge it
        # clamps to the last whole chunk, unless the chunks there are checked (ragged)
        if not edge_mn or ragged:
            return x
        return f'min({x}, {lim} - {vec})'

    def local_col(op, r):
        # column in local memory of chunk r of operand op ('a' or 'b'), a C expression
        mk = a_mk if op == 'a' else b_nk
        x = f"{op}_{'mm' if op == 'a' else 'nn'}{r}"
        row, col = (x, f'{op}_kk{r}') if mk else (f'{op}_kk{r}', x)
        return f'{col} ^ {swizzled(row, not mk)}' if swizzle else col

    ptx_types = 'f64.f64.f64.f64' if f64 else 'f32.tf32.tf32.f32'
    ab_con, c_con = ('d', 'd') if f64 else ('r', 'f')
    # plain TF32 rounds once, as a slice is staged (copy 'regs'), not at every fragment load
    staged_tf32 = prec == 'tf32' and copy == 'regs'
    passes = [('lo', 'hi'), ('hi', 'lo'), ('hi', 'hi')]  # 3xtf32: small products first
    parts = ('hi', 'lo') if prec == '3xtf32' else ('hi',)
    frag_type = 'double' if f64 else 'uint'
    steps = bk // kk_  # mma k steps per slice
    # pipelined fragments: set fn holds the operand with fewer registers (see multiply_pipelined)
    by_rows = mi_n * a_regs > ni_n * b_regs
    fn_op, fn_count, fn_regs = ('b', ni_n, b_regs) if by_rows else ('a', mi_n, a_regs)
    tiles = [(i, j) for i in range(mi_n) for j in range(ni_n)]

    def split(dst, src):
        # fragment register(s) dst_<part> := the local memory element src
        if f64:
            return f'{dst}_hi = {src};'
        if prec == 'tf32':
            return f"{dst}_hi = {'as_uint' if staged_tf32 else 'tf32'}({src});"
        return (f'{{ const float v = {src}; {dst}_hi = tf32(v); '
                f'{dst}_lo = tf32(v - as_float({dst}_hi)); }}')
%>\
% if f64:
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
% endif
#pragma OPENCL FP_CONTRACT OFF

% if not f64:
// float -> TF32 (round to nearest, ties away), as the bits the mma instruction takes
inline uint tf32(const float x)
{
    uint r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
% endif
% if mbar:

// mbarriers (sm_90): a buffer's writers arrive after writing it, its readers wait for the
// phase in which all have arrived; no work-item waits for the others to reach a barrier
inline void mbar_init(__local ulong *bars, const uint count)
{
    for (int b = 0; b < ${nbuf}; b++)
        asm volatile("mbarrier.init.shared.b64 [%0], %1;"
                     :: "r"((uint)(size_t)(bars + b)), "r"(count) : "memory");
}

inline void mbar_arrive(__local ulong *bar)
{
    ulong state;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];"
                 : "=l"(state) : "r"((uint)(size_t)bar) : "memory");
}

inline void mbar_wait(__local ulong *bar, const uint parity)
{
    uint done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2; "
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"((uint)(size_t)bar), "r"(parity) : "memory");
    } while (!done);
}
% endif
% if copy == 'async':

// copy `bytes` (0 .. ${vec * size}) from global to local memory, zero-filling the rest of the
// ${vec * size} bytes at `dst`; completes at a later cp.async.wait_group
inline void copy_async(__local ${T} *dst, __global const ${T} *src, const int bytes)
{
    asm volatile("cp.async.${'cg' if vec * size == 16 else 'ca'}.shared.global [%0], [%1], ${vec * size}, %2;"
                 :: "r"((uint)(size_t)dst), "l"(src), "r"(bytes));
}
% endif

__kernel __attribute__((reqd_work_group_size(${threads}, 1, 1)))
void ${name}(const int M, const int N, const int K, const ${T} alpha, const ${T} beta,
             __global const ${T} *A, const long a_off, const long a_sm, const long a_sk,
             const long a_sb,
             __global const ${T} *B, const long b_off, const long b_sk, const long b_sn,
             const long b_sb,
             __global ${T} *C, const long c_off, const long c_sm, const long c_sn,
             const long c_sb)
{
    __local ${T} Alm[${nbuf}][${a_rows[0]}][${la}] __attribute__((aligned(16)));
    __local ${T} Blm[${nbuf}][${b_rows[0]}][${lb}] __attribute__((aligned(16)));
    const int tid = get_local_id(0);
    const int lane = tid % 32, warp = tid / 32;
    const int g = lane / 4, t = lane % 4;
    // this warp's tile within the work-group's
    const int wr = (warp / ${wn}) * ${tm}, wc = (warp % ${wn}) * ${tn};
% if swizzle:
    // XOR masks of this work-item's fragment columns (rows g, or rows t of k)
    const int a_sw = ${swizzled('t' if not a_mk else 'g', not a_mk)};
    const int b_sw = ${swizzled('t' if not b_nk else 'g', not b_nk)};
% endif
% if group_m:
    int ti, tj;  // this work-group's tile
    {
        const int rows = get_num_groups(0), band = ${group_m} * get_num_groups(1);
        const int id = get_group_id(1) * rows + get_group_id(0);
        const int first = id / band * ${group_m}, height = min(rows - first, ${group_m});
        ti = first + id % band % height;
        tj = id % band / height;
    }
    const int bm0 = ti * ${bm}, bn0 = tj * ${bn};
% else:
    const int bm0 = get_group_id(0) * ${bm}, bn0 = get_group_id(1) * ${bn};
% endif
    const long batch = get_global_id(2);
    A += a_off + batch * a_sb;
    B += b_off + batch * b_sb;
    C += c_off + batch * c_sb;
% for i in range(mi_n):
% for j in range(ni_n):
    ${T} ${', '.join(f'c{i}_{j}_{r} = 0' for r in range(c_regs))};
% endfor
% endfor
## Chunk e = tid + r * threads of each slice: its place in the tile, and its global offset
## but for the k step, worked out once here. Rows past M (columns past N) clamp into the
## matrix; along the unit-stride index, chunks of vec > 1 that cross the edge are loaded
## element by element (or zero-filled) instead.
% for r in range(a_loads):
% if a_mk:
    const int a_kk${r} = (tid + ${r * threads}) % ${bk // vec} * ${vec}, a_mm${r} = (tid + ${r * threads}) / ${bk // vec};
    const int a_mv${r} = ${f'min(bm0 + a_mm{r}, M - 1)' if edge_mn else f'bm0 + a_mm{r}'};
% else:
    const int a_mm${r} = (tid + ${r * threads}) % ${bm // vec} * ${vec}, a_kk${r} = (tid + ${r * threads}) / ${bm // vec};
    const int a_mv${r} = ${clamped('bm0 + a_mm%d' % r, 'M')};
% endif
    const long a_at${r} = a_mv${r} * a_sm + a_kk${r} * a_sk;
    const int a_lc${r} = ${local_col('a', r)};
% endfor
% for r in range(b_loads):
% if b_nk:
    const int b_kk${r} = (tid + ${r * threads}) % ${bk // vec} * ${vec}, b_nn${r} = (tid + ${r * threads}) / ${bk // vec};
    const int b_nv${r} = ${f'min(bn0 + b_nn{r}, N - 1)' if edge_mn else f'bn0 + b_nn{r}'};
% else:
    const int b_nn${r} = (tid + ${r * threads}) % ${bn // vec} * ${vec}, b_kk${r} = (tid + ${r * threads}) / ${bn // vec};
    const int b_nv${r} = ${clamped('bn0 + b_nn%d' % r, 'N')};
% endif
    const long b_at${r} = b_kk${r} * b_sk + b_nv${r} * b_sn;
    const int b_lc${r} = ${local_col('b', r)};
% endfor
<%def name="chunk_ok(op, r, k0)">\
## Whether chunk r of operand op ('a' or 'b') in the slice at k0 lies wholly inside the
## matrix ('1' where no edge can cut it).
<%
    mk = a_mk if op == 'a' else b_nk
    x, lim, x0 = ('mm', 'M', 'bm0') if op == 'a' else ('nn', 'N', 'bn0')
    conds = []
    if edge_k:
        conds.append(f'{k0} + {op}_kk{r} + {vec if mk else 1} <= K')
    if ragged and not mk:
        conds.append(f'{x0} + {op}_{x}{r} + {vec} <= {lim}')
%>${' && '.join(conds) or '1'}</%def>
% if copy == 'regs':
    ${V} ${', '.join([f'ra{r}' for r in range(a_loads)] + [f'rb{r}' for r in range(b_loads)])};
% endif
<%def name="fetch(k0)">\
## this work-item's chunks of the slice at ${k0}, into registers
        {
            const long ak = (long)(${k0}) * a_sk, bk = (long)(${k0}) * b_sk;
% for op, loads, part, chunks, mk in (('a', a_loads, a_part, a_chunks, a_mk), ('b', b_loads, b_part, b_chunks, b_nk)):
<%
    x, lim, x0 = ('mm', 'M', 'bm0') if op == 'a' else ('nn', 'N', 'bn0')
    s_fast = (f'{op}_sk' if mk else ('a_sm' if op == 'a' else 'b_sn'))
    base = 'A' if op == 'a' else 'B'
%>\
% for r in range(loads):
            ${'if (tid + %d < %d)' % (r * threads, chunks) if part else ''}
            {
                const long at = ${op}_at${r} + ${op}k;
% if vec == 1:
                r${op}${r} = ${chunk_ok(op, r, k0)} ? ${base}[at] : 0;
% else:
                if (${chunk_ok(op, r, k0)}) {
                    r${op}${r} = *(__global const ${V} *)(${base} + at);
                } else {  // a chunk crossing K (or M, N): element by element
% for e in range(vec):
<%
    if mk:
        ok = f'{k0} + {op}_kk{r} + {e} < K' if edge_k else '1'
    else:
        ok = ' && '.join(([f'{k0} + {op}_kk{r} < K'] if edge_k else [])
                         + ([f'{x0} + {op}_{x}{r} + {e} < {lim}'] if ragged else [])) or '1'
%>\
                    r${op}${r}.s${e} = ${ok} ? ${base}[at + ${e} * ${s_fast}] : 0;
% endfor
                }
% endif
            }
% endfor
% endfor
        }
</%def>\
<%def name="stage(buf)">\
## the registers of fetch() into local memory buffer ${buf}
% for op, loads, part, chunks, mk in (('a', a_loads, a_part, a_chunks, a_mk), ('b', b_loads, b_part, b_chunks, b_nk)):
<%
    lm = 'Alm' if op == 'a' else 'Blm'
    x = 'mm' if op == 'a' else 'nn'
    first, second = (f'{op}_{x}' if mk else f'{op}_kk'), f'{op}_lc'
%>\
% for r in range(loads):
<%
    x = f'r{op}{r}'
    if staged_tf32:
        x = f'as_float(tf32({x}))' if vec == 1 else \
            f'({V})({", ".join(f"as_float(tf32({x}.s{e}))" for e in range(vec))})'
%>\
        ${'if (tid + %d < %d)' % (r * threads, chunks) if part else ''}
% if vec == 1:
            ${lm}[${buf}][${first}${r}][${second}${r}] = ${x};
% else:
            *(__local ${V} *)&${lm}[${buf}][${first}${r}][${second}${r}] = ${x};
% endif
% endfor
% endfor
</%def>\
<%def name="fetch_async(k0, buf)">\
## cp.async copies of this work-item's chunks of the slice at ${k0} into buffer ${buf}
        {
            const long ak = (long)(${k0}) * a_sk, bk = (long)(${k0}) * b_sk;
% for op, loads, part, chunks, mk in (('a', a_loads, a_part, a_chunks, a_mk), ('b', b_loads, b_part, b_chunks, b_nk)):
<%
    lm = 'Alm' if op == 'a' else 'Blm'
    x, lim, x0 = ('mm', 'M', 'bm0') if op == 'a' else ('nn', 'N', 'bn0')
    first, second = (f'{op}_{x}' if mk else f'{op}_kk'), f'{op}_lc'
    base = 'A' if op == 'a' else 'B'
    if mk:  # the chunk runs along k
        n_ok = f'clamp(K - ({k0} + {op}_kk{{r}}), 0, {vec})' if edge_k else str(vec)
    else:   # along m or n; the whole chunk is past K or not
        n_ok = (f'clamp({lim} - ({x0} + {op}_{x}{{r}}), 0, {vec})' if ragged else str(vec))
        if edge_k:
            n_ok = f'({k0} + {op}_kk{{r}} < K ? {n_ok} : 0)'
%>\
% for r in range(loads):
            ${'if (tid + %d < %d)' % (r * threads, chunks) if part else ''}
            {
                const int n = ${n_ok.format(r=r)};
                copy_async(&${lm}[${buf}][${first}${r}][${second}${r}],
                           n ? ${base} + ${op}_at${r} + ${op}k : ${base}, n * ${size});
            }
% endfor
% endfor
        }
</%def>\
<%def name="declare_frags(p, a=True, b=True)">\
## registers of fragment set p (its A fragments where a; B's where b)
% if a:
            ${frag_type} ${', '.join(f'{p}a{i}_{r}_{part}' for i in range(mi_n) for r in range(a_regs) for part in parts)};
% endif
% if b:
            ${frag_type} ${', '.join(f'{p}b{j}_{r}_{part}' for j in range(ni_n) for r in range(b_regs) for part in parts)};
% endif
</%def>\
<%def name="load_frags(p, buf, k, a_rows=None, b_cols=None)">\
## fragment set p := this warp's rows a_rows and columns b_cols (default: all) of k step
## ${k} of buffer ${buf}
        {
            __local const ${T} (*Al)[${la}] = Alm[${buf}];
            __local const ${T} (*Bl)[${lb}] = Blm[${buf}];
% for i in (range(mi_n) if a_rows is None else a_rows):
% for r in range(a_regs):
            ${split(f'{p}a{i}_{r}', a_at(i * mm_ + a_row(r), k + a_k(r)))}
% endfor
% endfor
% for j in (range(ni_n) if b_cols is None else b_cols):
% for r in range(b_regs):
            ${split(f'{p}b{j}_{r}', b_at(k + 4 * r, j * 8))}
% endfor
% endfor
        }
</%def>\
<%def name="mma_op(acc, p, i, j, pa, pb)">\
## acc (a format string of register r) += A fragment i (part pa) x B fragment j (part pb) of set p
asm volatile("mma.sync.aligned.${shape}.row.col.${ptx_types} "
                         "{${regs(c_regs, 0)}}, {${regs(a_regs, c_regs)}}, "
                         "{${regs(b_regs, c_regs + a_regs)}}, {${regs(c_regs, 0)}};"
                         : ${', '.join(f'"+{c_con}"({acc.format(r=r)})' for r in range(c_regs))}
                         : ${', '.join([f'"{ab_con}"({p}a{i}_{r}_{pa})' for r in range(a_regs)] + [f'"{ab_con}"({p}b{j}_{r}_{pb})' for r in range(b_regs)])});</%def>\
<%def name="mmas(p, tiles)">\
## the accumulators of `tiles` ((i, j) pairs) += products of fragment set p
% for i, j in tiles:
% if prec == '3xtf32':
## The tensor cores' float32 accumulation is not rounded to nearest: its error grows with
## the terms summed, several times the SIMT kernel's over long k. So the three products of a
## k step go into a fresh accumulator t, added to the tile's with a rounded float32 add.
            {
                float ${', '.join(f't{r} = 0' for r in range(c_regs))};
% for pa, pb in passes:
                ${mma_op(f't{{r}}', p, i, j, pa, pb)}
% endfor
% for r in range(c_regs):
                c${i}_${j}_${r} += t${r};
% endfor
            }
% else:
            ${mma_op(f'c{i}_{j}_{{r}}', p, i, j, 'hi', 'hi')}
% endif
% endfor
</%def>\
<%def name="multiply(buf)">\
## this warp's mma tiles += its rows of the slice in buffer ${buf} x its columns
% for k in range(0, bk, kk_):
        {
${declare_frags('f')}\
${load_frags('f', buf, k)}\
${mmas('f', tiles)}\
        }
% endfor
</%def>\
<%def name="multiply_pipelined(buf, next_slice, publish=None)">\
## As multiply(), with the next k step's fragments loaded while this one's products run:
## the fragments of the operand with fewer registers (B's where equal) into set fn first,
## then each fragment of the other as soon as its last product is issued (by_rows: the
## products go row by row of A fragments, else column by column of B's). Set f holds k step
## 0 of the slice on entry and the next slice's k step 0 on exit. Before the last k step's
## loads, the products of its first row (column) are issued and next_slice() sets nbuf_,
## the next slice's buffer, and makes it visible in local memory (where `more`). publish(),
## where given, runs after the first row (column) of k step 0: it sets nbuf_ and writes the
## next slice (next_slice() then only waits for every work-item's writes).
% for s in range(steps):
<%
    last = s == steps - 1
    src, k = ('nbuf_', 0) if last else (buf, (s + 1) * kk_)
    hooks = ([publish] if publish and s == 0 else []) + ([next_slice] if last else [])
    early = 1 if hooks else 0
    lines = range(mi_n if by_rows else ni_n)
    line_tiles = (lambda x: [(x, j) for j in range(ni_n)]) if by_rows else \
        (lambda x: [(i, x) for i in range(mi_n)])
%>\
% if hooks:
${mmas('f', [t for x in range(early) for t in line_tiles(x)])}\
% for hook in hooks:
${hook()}\
% endfor
% endif
${load_frags('fn', src, k, a_rows=() if by_rows else None, b_cols=None if by_rows else ())}\
% for x in lines:
% if x >= early:
${mmas('f', line_tiles(x))}\
% endif
${load_frags('f', src, k, a_rows=(x,) if by_rows else (), b_cols=() if by_rows else (x,))}\
% endfor
% for part in parts:
% for x in range(fn_count):
            ${' '.join(f'f{fn_op}{x}_{r}_{part} = fn{fn_op}{x}_{r}_{part};' for r in range(fn_regs))}
% endfor
% endfor
% endfor
</%def>\
<%def name="stage_next()">\
## The fetched slice into the other buffer; pipelined, the registers are refilled at once
## with the slice after it, so that its loads have a whole slice's products to land.
        nbuf_ = buf ^ 1;
        if (more) {
${stage('nbuf_')}\
% if pipeline:
            if (k0 + ${2 * bk} < K) {
${fetch('k0 + ' + str(2 * bk))}\
            }
% endif
            barrier(CLK_LOCAL_MEM_FENCE);
        }
</%def>\
<%def name="publish_next()">\
## sync 'mbar': the fetched slice into the next buffer, this work-item's arrival on that
## buffer's mbarrier, and the registers refilled with the slice after it
        nbuf_ = buf == ${nbuf - 1} ? 0 : buf + 1;
${stage('nbuf_')}\
        mbar_arrive(&mbars[nbuf_]);
        {
            const int k_next = k0 + ${2 * bk} < K ? k0 + ${2 * bk} : k0;
${fetch('k_next')}\
        }
</%def>\
<%def name="wait_next()">\
## sync 'mbar': wait until every work-item has written the next slice (slice s + 1 is the
## buffer's use s / ${nbuf}: the phase parity)
        if (more)
            mbar_wait(&mbars[nbuf_], (k0 / ${bk * nbuf}) & 1);
</%def>\
<%def name="await_next()">\
        nbuf_ = buf + 1 == ${nbuf} ? 0 : buf + 1;
        if (more) {
            asm volatile("cp.async.wait_group ${nbuf - 2};");
            barrier(CLK_LOCAL_MEM_FENCE);
        }
</%def>\
% if copy == 'regs':
    // slice s is staged in buffer s % ${nbuf}: while one buffer feeds the tensor cores, the next
    // slice is fetched from global memory and then written into the other
% if mbar:
    __local ulong mbars[${nbuf}] __attribute__((aligned(8)));
    if (tid == 0)
        mbar_init(mbars, ${threads});
% endif
${fetch('0')}\
${stage('0')}\
% if mbar:
    {   // publish_next() stages these registers whatever K is: never left unset
        const int k_first = ${bk} < K ? ${bk} : 0;
${fetch('k_first')}\
    }
% elif pipeline:
    if (${bk} < K) {
${fetch(str(bk))}\
    }
% endif
    barrier(CLK_LOCAL_MEM_FENCE);
    int buf = 0, nbuf_;
% if pipeline:
${declare_frags('f')}\
${declare_frags('fn', a=not by_rows, b=by_rows)}\
${load_frags('f', '0', 0)}\
% endif
    for (int k0 = 0; k0 < K; k0 += ${bk}) {
        const int more = k0 + ${bk} < K;
% if not pipeline:
        if (more) {
${fetch('k0 + ' + str(bk))}\
        }
% endif
% if pipeline:
${multiply_pipelined('buf', wait_next, publish_next) if mbar else multiply_pipelined('buf', stage_next)}\
% else:
${multiply('buf')}\
${stage_next()}\
% endif
        buf = nbuf_;
    }
% else:
    // slice s goes to buffer s % ${nbuf}: ${nbuf - 1} slices are in flight while one is multiplied.
    // Every work-item commits one copy group per slice (empty past K), so that
    // "all but the newest ${nbuf - 2} groups done" means "the next slice has landed".
% for s in range(nbuf - 1):
    if (${s * bk} < K) {
${fetch_async(str(s * bk), str(s))}\
    }
    asm volatile("cp.async.commit_group;");
% endfor
    int buf = 0, nbuf_;
    asm volatile("cp.async.wait_group ${nbuf - 2};");  // slice 0 has landed
    barrier(CLK_LOCAL_MEM_FENCE);
% if pipeline:
${declare_frags('f')}\
${declare_frags('fn', a=not by_rows, b=by_rows)}\
${load_frags('f', '0', 0)}\
% endif
    for (int k0 = 0; k0 < K; k0 += ${bk}) {
        const int more = k0 + ${bk} < K;
        {   // refill the buffer read in the slice before this one (free since its barrier)
            const int next = k0 + ${(nbuf - 1) * bk};
            const int refill = buf == 0 ? ${nbuf - 1} : buf - 1;
            if (next < K) {
${fetch_async('next', 'refill')}\
            }
            asm volatile("cp.async.commit_group;");
        }
% if pipeline:
${multiply_pipelined('buf', await_next)}\
% else:
${multiply('buf')}\
${await_next()}\
% endif
        buf = nbuf_;
    }
    asm volatile("cp.async.wait_group 0;");
% endif
% for i in range(mi_n):
% for j in range(ni_n):
% for r in range(c_regs):
    {
        const int gm = bm0 + wr + g + ${i * mm_ + 8 * (r // 2)}, gn = bn0 + wc + 2 * t + ${j * 8 + r % 2};
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
