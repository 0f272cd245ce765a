## GEMV: y[p, m] = alpha * sum_k A[p, m, k] * x[p, k] + beta * y[p, m] for A with unit
## stride along k (row-major), x and y any stride, batched over dimension 2 of the launch
## (a batch stride of 0 broadcasts). Bandwidth-bound: A is read once, as vectors, with
## `unroll` independent vector accumulators; x is read through global memory (it stays in
## cache). y is read only where beta != 0 (a runtime test: y may hold NaN or garbage).
## Inputs:
##   name        kernel name
##   dtype       storage dtype of A, x, y; acc_dtype the accumulator's (float16: float32;
##               integers and bool: int32 or int64, wrapping as numpy's integer matmul)
##   mode        'group' (GPUs): a work-group of local_size work-items serves local_size /
##               row_items rows, row_items (an argument, a power of two) work-items per row
##               striding along k with aligned vector loads (each row's unaligned head
##               is loaded as scalars), then a tree in local memory per row;
##               'item' (CPUs): a work-item per `rows` rows, x's vector loaded once for all of
##               them (the rows of a ragged last item repeat row M - 1, not stored)
##   local_size  group mode: the work-group size (reqd_work_group_size); item mode: 0
##   rows        item mode: rows per work-item; group mode: 0
##   vec         elements per vector load: 2, 4, 8 or 16
##   unroll      independent vector accumulators (loads in flight) per row
## Arguments: M, K, row_items (group mode; ignored in item mode), alpha, beta, A pointer,
## offset, stride m, stride batch; x pointer, offset, stride k, stride batch; y pointer,
## offset, stride m, stride batch. Offsets and strides count elements.
## Defines: __kernel void ${name}(...)
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

    def xload(unit, k0):
        """x[k0 ... k0 + vec - 1] as a vector; unit: 'aligned' (x_sk == 1 and xp + k0 on a
        vector boundary), True (x_sk == 1) or False (any stride)"""
        if unit == 'aligned':  # group mode: k0 is head + a multiple of vec
            return vload('(xp + head)', f'(({k0}) - head) / {vec}', aligned=True)
        if unit:
            return widen(f'vload{vec}(0, xp + ({k0}))') if not half else \
                f'vload_half{vec}(0, xp + ({k0}))'
        parts = ', '.join(scalar('xp', f'(({k0}) + {c}) * x_sk') for c in range(vec))
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

<%def name="store(cond, m, value)">\
    if (${cond}) {
        const long at = y_off + batch * y_sb + (long)(${m}) * y_sm;
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
void ${name}(const int M, const int K, const int row_items, const ${T} alpha, const ${T} beta,
             __global const ${S} *A, const long a_off, const long a_sm, const long a_sb,
             __global const ${S} *X, const long x_off, const long x_sk, const long x_sb,
             __global ${S} *Y, const long y_off, const long y_sm, const long y_sb)
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
${store('t == 0 && m < M', 'm', 'part[lid]')}\
% else:
<%def name="item_loop(unit)">\
## `rows` rows at a time share each vector of x
        for (; k + ${unroll * vec} <= K; k += ${unroll * vec}) {
% for u in range(unroll):
            const ${TV} x${u} = ${xload(unit, f'k + {u * vec}')};
% endfor
% for r in range(rows):
% for u in range(unroll):
            ${madd(vload(f'row{r} + k', u), f'x{u}', f'acc{r}_{u}')}
% endfor
% endfor
        }
        for (; k + ${vec} <= K; k += ${vec}) {
            const ${TV} x0 = ${xload(unit, 'k')};
% for r in range(rows):
            ${madd(vload(f'row{r} + k', 0), 'x0', f'acc{r}_0')}
% endfor
        }
</%def>\
    const int m0 = get_global_id(0) * ${rows};
    if (m0 >= M)
        return;
% for r in range(rows):
    __global const ${S} *row${r} = A + a_off + batch * a_sb + (long)min(m0 + ${r}, M - 1) * a_sm;
% for u in range(unroll):
    ${TV} acc${r}_${u} = 0;
% endfor
% endfor
    int k = 0;
    if (x_sk == 1) {
${item_loop(True)}\
    } else {
${item_loop(False)}\
    }
% for r in range(rows):
% for line in fold([f'acc{r}_{u}' for u in range(unroll)]) + hsum(f's{r}', f'acc{r}_0'):
    ${line}
% endfor
% endfor
    for (; k < K; ++k) {
        const ${T} xk = ${scalar('xp', 'k * x_sk')};
% for r in range(rows):
        ${madd(scalar(f'row{r}', 'k'), 'xk', f's{r}')}
% endfor
    }
% for r in range(rows):
${store(f'm0 + {r} < M', f'm0 + {r}', f's{r}')}\
% endfor
% endif
}
