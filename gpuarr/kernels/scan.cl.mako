## Scans along one axis (cumsum, cumprod, ScanKernel), for rows of any layout. A row is cut
## in chunks; the reduction kernel first writes each chunk's total to totals[c * rows + r],
## then:
##   ${name}_carry   a work-item per row: exclusive scan of its chunk totals, in place
##   ${name}_scan<kdim>  (one per kdim) a work-group per (row r, chunk c), o = r fastest:
##                   the chunk in blocks of
##                   local_size * unroll elements: coalesced loads into local memory, a serial
##                   scan of `unroll` consecutive elements per work-item, a Hillis-Steele scan
##                   of the work-items' totals, coalesced stores; starting from the carry
## Every element is read twice and written once; the work is O(n).
## Inputs: in_dtype, acc_dtype, out_dtype; op_expr combines accumulators a and b; neutral;
##   preamble (user helpers); exclusive (element k gets the scan of elements before it);
##   kdims: the numbers of row dimensions passed, a scan kernel each (>= 1; the caller may pad
##   them with size 1, stride 0); local_size (power of two); unroll; index_t.
## Arguments of _scan<kdim>: ga_rows, ga_n (row length), ga_chunk, [ga_kdims], in pointer + offset
##   + [row strides] + step, out pointer + offset + [row strides] + step, totals pointer.
<%! import gpuarr.kernels.cltypes as t %>\
<%
    A = t.ctype(acc_dtype)
    I = index_t
    S = 'const ' + index_t
    L = local_size
    U = unroll
%>\
${t.fp64_pragma([in_dtype, acc_dtype, out_dtype])}
#pragma OPENCL FP_CONTRACT OFF
${preamble}
inline ${A} ga_op(${A} a, ${A} b) { return ${op_expr}; }
// local memory index, padded against bank conflicts of the serial per-item reads
#define GA_PAD(j) ((j) + ((j) >> 5))

__kernel void ${name}_carry(${S} ga_rows, ${S} ga_chunks, __global ${A} *totals)
{
    const ${I} r = (${I})get_global_id(0);
    if (r >= ga_rows) return;
    ${A} acc = ${neutral};
    for (${I} c = 0; c < ga_chunks; ++c) {
        const ${A} v = totals[c * ga_rows + r];
        totals[c * ga_rows + r] = acc;
        acc = ga_op(acc, v);
    }
}

<%def name="row_base(var, kdim)">\
    ${I} ${var}_base = ${var}_off;
% if kdim == 1:
    ${var}_base += r * ${var}_ks0;
% else:
    {
        ${I} rem = r, c;
% for d in range(kdim - 1, -1, -1):
        if (ga_kdim${d} != 1) { c = rem % ga_kdim${d}; rem /= ga_kdim${d}; ${var}_base += c * ${var}_ks${d}; }
% endfor
    }
% endif
</%def>\
% for kdim in kdims:

__kernel void ${name}_scan${kdim}(
    ${S} ga_rows, ${S} ga_n, ${S} ga_chunk
% for d in range(kdim):
    , ${S} ga_kdim${d}
% endfor
% for var, dt in (('in', in_dtype), ('out', out_dtype)):
    , __global ${'const ' if var == 'in' else ''}${t.storage(dt)} *${var}_p, ${S} ${var}_off
% for d in range(kdim):
    , ${S} ${var}_ks${d}
% endfor
    , ${S} ${var}_step
% endfor
    , __global const ${A} *totals)
{
    const ${I} g = (${I})get_group_id(0), lid = (${I})get_local_id(0);
    const ${I} r = g % ga_rows, chunk = g / ga_rows;
${row_base('in', kdim)}\
${row_base('out', kdim)}\
    const ${I} begin = chunk * ga_chunk, end = min(begin + ga_chunk, ga_n);
    __local ${A} block[GA_PAD(${L * U})];
    __local ${A} item_total[${L}];
    ${A} carry = totals[g];
    for (${I} base = begin; base < end; base += ${L * U}) {
% for j in range(U):
        {
            const ${I} k = base + ${j * L} + lid;
            block[GA_PAD(${j * L} + lid)] = k < end ? ${t.convert(in_dtype, acc_dtype, t.load(in_dtype, 'in_p', 'in_base + k * in_step'))} : ${neutral};
        }
% endfor
        barrier(CLK_LOCAL_MEM_FENCE);
        // serial scan of this work-item's elements; pre_j: the scan up to element j
        ${A} acc = ${neutral};
% for j in range(U):
        const ${A} pre${j} = ${'acc' if exclusive else 'ga_op(acc, block[GA_PAD(lid * ' + str(U) + ' + ' + str(j) + ')])'};
% if exclusive:
        acc = ga_op(acc, block[GA_PAD(lid * ${U} + ${j})]);
% else:
        acc = pre${j};
% endif
% endfor
% if L > 1:
        // Hillis-Steele inclusive scan of the work-items' totals
        item_total[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
% for s in [1 << j for j in range(L.bit_length() - 1)]:
        if (lid >= ${s}) acc = ga_op(item_total[lid - ${s}], acc);
        barrier(CLK_LOCAL_MEM_FENCE);
        item_total[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
% endfor
        const ${A} before = ga_op(carry, lid ? item_total[lid - 1] : ${neutral});
% else:
        item_total[0] = acc;
        const ${A} before = carry;
% endif
% for j in range(U):
        block[GA_PAD(lid * ${U} + ${j})] = ga_op(before, pre${j});
% endfor
        barrier(CLK_LOCAL_MEM_FENCE);
% for j in range(U):
        {
            const ${I} k = base + ${j * L} + lid;
            if (k < end) {
                const ${I} at = out_base + k * out_step;
                ${t.store(out_dtype, 'out_p', 'at', 'block[GA_PAD(' + str(j * L) + ' + lid)]', acc_dtype)}
            }
        }
% endfor
        carry = ga_op(carry, item_total[${L - 1}]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
% endfor
