## One elementwise kernel: outputs = operation(inputs), one element per work-item.
## Inputs:
##   name          kernel name
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
##   raw           True for user kernels: outputs are bare pointers out<k>_p indexed by
##                 out<k>_i in the operation, with no local variable and no store
## Defines: __kernel void ${name}(n, [dims], per array operand: ptr, offset, [strides], ...)
<%! import gpuarr.kernels.cltypes as t %>\
${t.fp64_pragma([d for d, _, _ in ins] + [l for _, l, _ in ins] + [d for d, _ in outs] + [l for _, l in outs] + [d for d, _ in scalar_args])}
// numpy rounds every operation: no contraction of a*b+c into fma.
#pragma OPENCL FP_CONTRACT OFF
${preamble}
<%
    arrays = [('in%d' % k, d) for k, (d, _, s) in enumerate(ins) if not s] + \
             [('out%d' % k, d) for k, (d, _) in enumerate(outs)]
%>\
__kernel void ${name}(
    const ${index_t} n
% for d in range(ndim):
    , const ${index_t} dim${d}
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
    const ${index_t} i = (${index_t})get_global_id(0);
    if (i >= n) return;
% if ndim == 0:
% for var, _ in arrays:
    const ${index_t} ${var}_i = ${var}_off + i;
% endfor
% else:
    ${index_t} rem = i, c;
% for var, _ in arrays:
    ${index_t} ${var}_i = ${var}_off;
% endfor
% for d in range(ndim - 1, 0, -1):
    c = rem % dim${d}; rem /= dim${d};
% for var, _ in arrays:
    ${var}_i += c * ${var}_s${d};
% endfor
% endfor
% for var, _ in arrays:
    ${var}_i += rem * ${var}_s0;
% endfor
% endif
% for k, (dt, ldt, scalar) in enumerate(ins):
% if not scalar:
    const ${t.ctype(ldt)} in${k} = ${t.convert(dt, ldt, t.load(dt, 'in%d_p' % k, 'in%d_i' % k))};
% endif
% endfor
% if raw:
    ${operation}
% else:
% for k, (_, ldt) in enumerate(outs):
    ${t.ctype(ldt)} out${k};
% endfor
    ${operation}
% for k, (dt, ldt) in enumerate(outs):
    ${t.store(dt, 'out%d_p' % k, 'out%d_i' % k, 'out%d' % k, ldt)}
% endfor
% endif
}
