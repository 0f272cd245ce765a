## GEMV: Y[p, m, n] = alpha * sum_k A[p, m, k] * X[p, k, n] + beta * Y[p, m, n] for A with
## unit stride along k (row-major), X and Y any stride, batched over dimension 2 of the launch
## (a batch stride of 0 broadcasts); n < N, N = 1 (a matrix-vector product) in group mode,
## a few columns (a narrow product) in item mode. Bandwidth-bound: A is read once, as
## vectors, with `unroll` independent vector accumulators per row and column; X is read
## through global memory (it stays in cache). Y is read only where beta != 0 (a runtime
## test: Y may hold NaN or garbage).
## Inputs:
##   name        kernel name
##   dtype       storage dtype of A, X, Y; acc_dtype the accumulator's (float16: float32;
##               integers and bool: int32 or int64, wrapping as numpy's integer matmul)
##   mode        'group' (GPUs): a work-group of local_size work-items serves local_size /
##               row_items rows, row_items (an argument, a power of two) work-items per row
##               striding along k with aligned vector loads (each row's unaligned head
##               is loaded as scalars), then a tree in local memory per row;
##               'item' (CPUs): a work-item per `rows` rows, each vector of X loaded once for
##               all of them; the columns `cols` at a time, the rows staying in cache (the
##               rows and columns of a ragged last pass repeat the last one, not stored)
##   local_size  group mode: the work-group size (reqd_work_group_size); item mode: 0
##   rows        item mode: rows per work-item; group mode: 0
##   cols        item mode: columns per pass over k (default 1); group mode: 1
##   vec         elements per vector load: 2, 4, 8 or 16
##   unroll      independent vector accumulators (loads in flight) per row and column
## Arguments: M, K, row_items (group mode; ignored in item mode), N (columns; group mode: 1),
## alpha, beta, A pointer, offset, stride m, stride batch; X pointer, offset, stride k,
## stride batch, stride n; Y pointer, offset, stride m, stride batch, stride n. Offsets and
## strides count elements.
## Defines: __kernel void ${name}(...)
<%page args="cols=1"/>\
<%! import gpuarr.kernels.cltypes as t %>\
<%
    assert vec in (2, 4, 8, 16), "vec must be 2, 4, 8 or 16"
    T = t.ctype(acc_dtype)
    S = t.storage(dtype)
    TV = f'{T}{vec}'
    half = dtype == 'float16'
    floating = acc_dtype.startswith('float')
    widen = (lambda e: e) if half or t.ctype(dtype) == T else (lambda e: f'convert_{TV}({e})')
    scalar = lambda ptr, idx: t.convert(dtype, acc_dtype, t.load(dtype, ptr, idx))
    madd = (lambda a, b, c: f'{c} = fma({a}, {b}, {c});') if floating else \
        (lambda a, b, c: f'{c} += {a} * {b};')

    def vload(ptr, i, aligned=False):
        """vector i of ptr (elements i * vec ...), in the accumulator's type"""
        if half:
            return f'vload{"a" if aligned else ""}_half{vec}({i}, {ptr})'
        if aligned:
            return widen(f'((__global const {S}{vec} *)({ptr}))[{i}]')
        return widen(f'vload{vec}({i}, {ptr})')

    def xload(unit, k0, ptr='xp'):
        """x[k0 ... k0 + vec - 1] (of column `ptr`) as a vector; unit: 'aligned' (x_sk == 1 and
        xp + k0 on a vector boundary), True (x_sk == 1) or False (any stride)"""
        if unit == 'aligned':  # group mode: k0 is head + a multiple of vec
            return vload('(xp + head)', f'(({k0}) - head) / {vec}', aligned=True)
        if unit:
            return widen(f'vload{vec}(0, {ptr} + ({k0}))') if not half else \
                f'vload_half{vec}(0, {ptr} + ({k0}))'
        parts = ', '.join(scalar(ptr, f'(({k0}) + {c}) * x_sk') for c in range(vec))
        return f'(({TV})({parts}))'

    def fold(names):
        """statements adding the accumulators `names` into the first, as a balanced tree"""
        lines, n = [], len(names)
        while n > 1:
            h = (n + 1) // 2
            lines += [f'{names[j]} += {names[j + h]};' for j in range(n - h)]
            n = h
        return lines

    def hsum(dst, v):
        """statements: the components of vector v summed as a balanced tree, into dst"""
        lines, width, cur = [], vec, v
        while width > 2:
            width //= 2
            lines.append(f'const {T}{width} {dst}_{width} = {cur}.lo + {cur}.hi;')
            cur = f'{dst}_{width}'
        return lines + [f'{T} {dst} = {cur}.s0 + {cur}.s1;']
%>\
${t.fp64_pragma([dtype, acc_dtype])}
#pragma OPENCL FP_CONTRACT OFF

<%def name="store(cond, m, n, value)">\
    if (${cond}) {
        const long at = y_off + batch * y_sb + (long)(${m}) * y_sm + (long)(${n}) * y_sn;
        ${T} r = alpha * ${value};
        if (beta != 0)
            r += beta * ${scalar('Y', 'at')};
        ${t.store(dtype, 'Y', 'at', 'r', acc_dtype)}
    }
</%def>\
% if mode == 'group':
__kernel __attribute__((reqd_work_group_size(${local_size}, 1, 1)))
% else:
__kernel
% endif
void ${name}(const int M, const int K, const int row_items, const int N,
             const ${T} alpha, const ${T} beta,
             __global const ${S} *A, const long a_off, const long a_sm, const long a_sb,
             __global const ${S} *X, const long x_off, const long x_sk, const long x_sb,
             const long x_sn,
             __global ${S} *Y, const long y_off, const long y_sm, const long y_sb,
             const long y_sn)
{
    const long batch = get_global_id(2);
    __global const ${S} *xp = X + x_off + batch * x_sb;
% if mode == 'group':
<%def name="group_loop(unit)">\
## row_items work-items stride along the aligned part of the row, unroll vectors at a time
            int i = t;
            for (; i + ${unroll - 1} * row_items < nv; i += ${unroll} * row_items) {
% for u in range(unroll):
                const ${TV} a${u} = ${vload('ra', f'i + {u} * row_items', aligned=True)};
% endfor
% for u in range(unroll):
                ${madd(f'a{u}', xload(unit, f'head + (i + {u} * row_items) * {vec}'), f'acc{u}')}
% endfor
            }
            for (; i < nv; i += row_items)
                ${madd(vload('ra', 'i', aligned=True), xload(unit, f'head + i * {vec}'), 'acc0')}
</%def>\
    const int lid = get_local_id(0);
    const int t = lid & (row_items - 1);
    const int m = get_group_id(0) * (${local_size} / row_items) + lid / row_items;
% for u in range(unroll):
    ${TV} acc${u} = 0;
% endfor
    ${T} s = 0;  // the scalar head and tail
    if (m < M) {
        const long base = a_off + batch * a_sb + (long)m * a_sm;
        __global const ${S} *row = A + base;
        // elements before the first ${vec}-aligned one (the buffer itself is aligned)
        const int head = min((int)((${vec} - base % ${vec}) % ${vec}), K);
        const int nv = (K - head) / ${vec};
        __global const ${S} *ra = row + head;
        // x read as aligned vectors where the row's aligned part meets aligned elements of x
        if (x_sk == 1 && (x_off + batch * x_sb + head) % ${vec} == 0) {
${group_loop('aligned')}\
        } else if (x_sk == 1) {
${group_loop(True)}\
        } else {
${group_loop(False)}\
        }
        for (int k = t; k < head; k += row_items)
            ${madd(scalar('row', 'k'), scalar('xp', 'k * x_sk'), 's')}
        for (int k = head + nv * ${vec} + t; k < K; k += row_items)
            ${madd(scalar('row', 'k'), scalar('xp', 'k * x_sk'), 's')}
    }
    __local ${T} part[${local_size}];
% for line in fold([f'acc{u}' for u in range(unroll)]) + hsum('h', 'acc0'):
    ${line}
% endfor
    part[lid] = s + h;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = row_items >> 1; w > 0; w >>= 1) {
        if (t < w)
            part[lid] += part[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
${store('t == 0 && m < M', 'm', '0', 'part[lid]')}\
% else:
<%
    pairs = [(r, c) for r in range(rows) for c in range(cols)]
%>\
<%def name="item_loop(unit)">\
## `rows` rows share each vector of X, `cols` columns each vector of A
        for (; k + ${unroll * vec} <= K; k += ${unroll * vec}) {
% for c in range(cols):
% for u in range(unroll):
            const ${TV} x${c}_${u} = ${xload(unit, f'k + {u * vec}', f'xp{c}')};
% endfor
% endfor
% for r in range(rows):
% for u in range(unroll):
            const ${TV} a${r}_${u} = ${vload(f'row{r} + k', u)};
% endfor
% endfor
% for r, c in pairs:
% for u in range(unroll):
            ${madd(f'a{r}_{u}', f'x{c}_{u}', f'acc{r}_{c}_{u}')}
% endfor
% endfor
        }
        for (; k + ${vec} <= K; k += ${vec}) {
% for c in range(cols):
            const ${TV} x${c}_0 = ${xload(unit, 'k', f'xp{c}')};
% endfor
% for r in range(rows):
            const ${TV} a${r}_0 = ${vload(f'row{r} + k', 0)};
% endfor
% for r, c in pairs:
            ${madd(f'a{r}_0', f'x{c}_0', f'acc{r}_{c}_0')}
% endfor
        }
</%def>\
    const int m0 = get_global_id(0) * ${rows};
    if (m0 >= M)
        return;
% for r in range(rows):
    __global const ${S} *row${r} = A + a_off + batch * a_sb + (long)min(m0 + ${r}, M - 1) * a_sm;
% endfor
    for (int n0 = 0; n0 < N; n0 += ${cols}) {
% for c in range(cols):
        __global const ${S} *xp${c} = xp + (long)min(n0 + ${c}, N - 1) * x_sn;
% endfor
% for r, c in pairs:
% for u in range(unroll):
        ${TV} acc${r}_${c}_${u} = 0;
% endfor
% endfor
        int k = 0;
        if (x_sk == 1) {
${item_loop(True)}\
        } else {
${item_loop(False)}\
        }
% for r, c in pairs:
% for line in fold([f'acc{r}_{c}_{u}' for u in range(unroll)]) + hsum(f's{r}_{c}', f'acc{r}_{c}_0'):
        ${line}
% endfor
% endfor
        for (; k < K; ++k) {
% for c in range(cols):
            const ${T} x${c}k = ${scalar(f'xp{c}', 'k * x_sk')};
% endfor
% for r, c in pairs:
            ${madd(scalar(f'row{r}', 'k'), f'x{c}k', f's{r}_{c}')}
% endfor
        }
% for r, c in pairs:
${store(f'm0 + {r} < M && n0 + {c} < N', f'm0 + {r}', f'n0 + {c}', f's{r}_{c}')}\
% endfor
    }
% endif
}
