## Elementwise kernels over the same operands: outputs = operation(inputs), one element per
## work-item; a kernel per (operation, layout variant).
## Inputs:
##   variants      (name, ndim, per_item, guarded, operation) of each kernel:
##   name          its name
##   ins           tuple of (storage dtype, loop dtype, is_scalar) per input; array inputs
##                 are converted from storage to loop dtype on load, scalars arrive as
##                 kernel arguments already in the loop dtype's compute type
##   outs          tuple of (storage dtype, loop dtype) per output
##   operation     OpenCL statements reading in0.., writing out0.. (loop dtypes), may use i
##                 (the flat C-order index of the element) and the scalar arguments
##   scalar_args   tuple of (dtype, name) extra scalar arguments the operation reads
##   ndim          0: every operand contiguous, no index arithmetic; else the number of
##                 collapsed dimensions, sizes and element strides passed as arguments
##   index_t       'int' or 'long', wide enough for every index and offset
##   preamble      OpenCL source placed before the kernel (helper functions, pragmas)
##   per_item      elements per work-item in the contiguous variant (GPUs: 4, CPUs: 1)
##   guarded       False for the bulk launch on CPUs, which covers whole work-groups only
##   raw           True for user kernels: outputs are bare pointers out<k>_p indexed by
##                 out<k>_i in the operation, with no local variable and no store
## Defines: __kernel void <name>(ga_n, [ga_dims], per array operand: ptr, offset, [strides],
##          ...) per variant; internal names start with ga_ so the operation's names cannot
##          clash
<%! import gpuarr.kernels.cltypes as t %>\
${t.fp64_pragma([d for d, _, _ in ins] + [l for _, l, _ in ins] + [d for d, _ in outs] + [l for _, l in outs] + [d for d, _ in scalar_args])}
// numpy rounds every operation: no contraction of a*b+c into fma.
#pragma OPENCL FP_CONTRACT OFF
${preamble}
<%
    arrays = [('in%d' % k, d) for k, (d, _, s) in enumerate(ins) if not s] + \
             [('out%d' % k, d) for k, (d, _) in enumerate(outs)]
%>\
% for v in variants:
${kernel(*v)}\
% endfor
<%def name="kernel(name, ndim, per_item, guarded, operation)">\
__kernel void ${name}(
    const ${index_t} ga_n
% for d in range(ndim):
    , const ${index_t} ga_dim${d}
% endfor
% for var, dt in arrays:
    , __global ${t.storage(dt)} *${var}_p, const ${index_t} ${var}_off
% for d in range(ndim):
    , const ${index_t} ${var}_s${d}
% endfor
% endfor
% for k, (_, ldt, scalar) in enumerate(ins):
% if scalar:
    , const ${t.ctype(ldt)} in${k}
% endif
% endfor
% for dt, sname in scalar_args:
    , const ${t.ctype(dt)} ${sname}
% endfor
)
{
% if ndim == 0 and per_item > 1:
    // Contiguous, several elements per work-item, ga_G apart (coalesced): when all are in
    // range their loads are issued before any store, for memory-level parallelism.
    const ${index_t} ga_g = (${index_t})get_global_id(0), ga_G = (${index_t})get_global_size(0);
    if (ga_g + ${per_item - 1} * ga_G < ga_n) {
% for j in range(per_item):
${loads(j, 'ga_g + %d * ga_G' % j, '        ')}\
% endfor
% for j in range(per_item):
        {
            const ${index_t} i = ga_g + ${j} * ga_G;
${element(j, '            ', operation)}\
        }
% endfor
    } else {
% for j in range(per_item):
        {
            const ${index_t} i = ga_g + ${j} * ga_G;
            if (i < ga_n) {
${loads(j, 'i', '                ')}\
${element(j, '                ', operation)}\
            }
        }
% endfor
    }
% else:
    const ${index_t} i = (${index_t})get_global_id(0);
% if guarded:
    if (i < ga_n) {
% else:
    {  // launched over whole work-groups inside the array: PoCL vectorises this form only
% endif
% if ndim == 0:
${loads(0, 'i', '    ')}\
% else:
    ${index_t} ga_rem = i, ga_c;
% for var, _ in arrays:
    ${index_t} ${var}_i = ${var}_off;
% endfor
% for d in range(ndim - 1, 0, -1):
    ga_c = ga_rem % ga_dim${d}; ga_rem /= ga_dim${d};
% for var, _ in arrays:
    ${var}_i += ga_c * ${var}_s${d};
% endfor
% endfor
% for var, _ in arrays:
    ${var}_i += ga_rem * ${var}_s0;
% endfor
% for k, (dt, ldt, scalar) in enumerate(ins):
% if not scalar:
    const ${t.ctype(ldt)} in${k}_0 = ${t.convert(dt, ldt, t.load(dt, 'in%d_p' % k, 'in%d_i' % k))};
% endif
% endfor
% endif
${element(0, '    ', operation)}\
    }
% endif
}
</%def>\
## Element j of a work-item at flat index `at`: index variables and input values.
<%def name="loads(j, at, pad)">\
% for var, _ in arrays:
${pad}const ${index_t} ${var}_i${'' if j == 0 else '_%d' % j} = ${var}_off + ${at};
% endfor
% for k, (dt, ldt, scalar) in enumerate(ins):
% if not scalar:
${pad}const ${t.ctype(ldt)} in${k}_${j} = ${t.convert(dt, ldt, t.load(dt, 'in%d_p' % k, 'in%d_i%s' % (k, '' if j == 0 else '_%d' % j)))};
% endif
% endfor
</%def>\
## The operation on element j, and the stores of its outputs.
<%def name="element(j, pad, operation)">\
<% sfx = '' if j == 0 else '_%d' % j %>\
% for var, _ in arrays:
% if j:
${pad}const ${index_t} ${var}_i = ${var}_i${sfx};
% endif
% endfor
% for k, (dt, ldt, scalar) in enumerate(ins):
% if not scalar:
${pad}const ${t.ctype(ldt)} in${k} = in${k}_${j};
% endif
% endfor
% if raw:
${pad}${operation}
% else:
% for k, (_, ldt) in enumerate(outs):
${pad}${t.ctype(ldt)} out${k};
% endfor
${pad}${operation}
% for k, (dt, ldt) in enumerate(outs):
${pad}${t.store(dt, 'out%d_p' % k, 'out%d_i' % k, 'out%d' % k, ldt)}
% endfor
% endif
</%def>\
