## Inclusive scans along one axis (cumsum, cumprod) in three kernels, for rows of any layout:
##   ${name}_totals  work-group (row r, chunk c): the reduction of the chunk -> totals[r*C + c]
##   ${name}_carry   work-item per row: exclusive scan of its C chunk totals, in place
##   ${name}_scan    work-group (r, c): scan of the chunk in blocks of local_size (a
##                   Hillis-Steele scan in local memory per block), starting from the carry
## Every element is read twice and written once; the work is O(n) plus O(log) per block.
## Inputs: in_dtype, acc_dtype, out_dtype; op_expr combines accumulators a and b;
##   neutral; kdim collapsed row dimensions (0: one row); local_size (power of two);
##   index_t.
## Arguments of _totals and _scan: ga_rows, ga_n (row length), ga_chunks, ga_chunk,
##   [ga_kdims], in pointer + offset + [row strides] + step, [out pointer + offset + [row
##   strides] + step (_scan only)], totals pointer.
<%! import gpuarr.kernels.cltypes as t %>\
${t.fp64_pragma([in_dtype, acc_dtype, out_dtype])}
#pragma OPENCL FP_CONTRACT OFF
<% A = t.ctype(acc_dtype) %>\
inline ${A} ga_op(${A} a, ${A} b) { return ${op_expr}; }

<%def name="row_args(var)">\
, __global ${'const ' if var == 'in' else ''}${t.storage(in_dtype if var == 'in' else out_dtype)} *${var}_p, const ${index_t} ${var}_off
% for d in range(kdim):
    , const ${index_t} ${var}_ks${d}
% endfor
    , const ${index_t} ${var}_step
</%def>\
<%def name="row_base(var)">\
    ${index_t} ${var}_base = ${var}_off;
% if kdim:
    {
        ${index_t} rem = r, c;
% for d in range(kdim - 1, -1, -1):
        c = rem % ga_kdim${d}; rem /= ga_kdim${d}; ${var}_base += c * ${var}_ks${d};
% endfor
    }
% endif
</%def>\
<%def name="head()">\
    const ${index_t} ga_rows, const ${index_t} ga_n, const ${index_t} ga_chunks,
    const ${index_t} ga_chunk
% for d in range(kdim):
    , const ${index_t} ga_kdim${d}
% endfor
</%def>\

__kernel void ${name}_totals(
${head()}    ${row_args('in')}    , __global ${A} *totals)
{
    const ${index_t} g = (${index_t})get_group_id(0), lid = (${index_t})get_local_id(0);
    const ${index_t} r = g / ga_chunks, chunk = g % ga_chunks;
${row_base('in')}\
    const ${index_t} begin = chunk * ga_chunk, end = min(begin + ga_chunk, ga_n);
    ${A} acc = ${neutral};
    for (${index_t} k = begin + lid; k < end; k += ${local_size})
        acc = ga_op(acc, ${t.convert(in_dtype, acc_dtype, t.load(in_dtype, 'in_p', 'in_base + k * in_step'))});
    __local ${A} part[${local_size}];
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
% for s in [local_size >> j for j in range(1, local_size.bit_length())]:
    if (lid < ${s}) part[lid] = ga_op(part[lid], part[lid + ${s}]);
    barrier(CLK_LOCAL_MEM_FENCE);
% endfor
    if (lid == 0) totals[g] = part[0];
}

__kernel void ${name}_carry(const ${index_t} ga_rows, const ${index_t} ga_chunks,
                            __global ${A} *totals)
{
    const ${index_t} r = (${index_t})get_global_id(0);
    if (r >= ga_rows) return;
    ${A} acc = ${neutral};
    for (${index_t} c = 0; c < ga_chunks; ++c) {
        const ${A} v = totals[r * ga_chunks + c];
        totals[r * ga_chunks + c] = acc;
        acc = ga_op(acc, v);
    }
}

__kernel void ${name}_scan(
${head()}    ${row_args('in')}    ${row_args('out')}    , __global const ${A} *totals)
{
    const ${index_t} g = (${index_t})get_group_id(0), lid = (${index_t})get_local_id(0);
    const ${index_t} r = g / ga_chunks, chunk = g % ga_chunks;
${row_base('in')}\
${row_base('out')}\
    const ${index_t} begin = chunk * ga_chunk, end = min(begin + ga_chunk, ga_n);
    __local ${A} block[${local_size}];
    ${A} carry = totals[g];
    for (${index_t} base = begin; base < end; base += ${local_size}) {
        const ${index_t} k = base + lid;
        ${A} v = k < end ? ${t.convert(in_dtype, acc_dtype, t.load(in_dtype, 'in_p', 'in_base + k * in_step'))} : ${neutral};
        block[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
% for s in [1 << j for j in range(local_size.bit_length() - 1)]:
        if (lid >= ${s}) v = ga_op(block[lid - ${s}], v);
        barrier(CLK_LOCAL_MEM_FENCE);
        block[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
% endfor
        if (k < end) {
            const ${index_t} at = out_base + k * out_step;
            ${t.store(out_dtype, 'out_p', 'at', 'ga_op(carry, v)', acc_dtype)}
        }
        carry = ga_op(carry, block[${local_size - 1}]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
