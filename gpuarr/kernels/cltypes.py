"""OpenCL C snippets for loading, storing and converting numpy dtypes, for the templates.

Dtypes are named as numpy spells them ('float16', 'bool', 'complex64', ...). float16 is
stored as half and computed in float (vload_half / vstore_half_rte need no cl_khr_fp16);
bool is stored as uchar 0/1; complex as float2/double2 (.s0 real, .s1 imaginary).
"""

from ..dtypes import cl_type, compute_type

__all__ = ["FP64", "convert", "ctype", "device_acqrel", "device_fence", "fp64_pragma", "load",
           "storage", "store"]

FP64 = ("float64", "complex128")


def ctype(dt):
    return compute_type(dt)


def storage(dt):
    return cl_type(dt)


def load(dt, ptr, idx):
    return f"vload_half({idx}, {ptr})" if dt == "float16" else f"{ptr}[{idx}]"


def store(dt, ptr, idx, value, value_dt):
    """Statement storing `value` (of dtype value_dt) into ptr[idx] of dtype dt."""
    if dt == "float16":
        # A double goes to half in one rounding, as numpy's double -> half cast does.
        via = "float64" if value_dt in FP64 else "float32"
        return f"vstore_half_rte({convert(value_dt, via, value)}, {idx}, {ptr});"
    return f"{ptr}[{idx}] = {convert(value_dt, dt, value)};"


def convert(src, dst, expr):
    """numpy's unsafe cast of `expr` from src to dst: complex -> real drops the imaginary
    part, anything -> bool is (x != 0), and bool -> anything reads every non-zero byte as 1
    (a bool view of other bytes holds 2 or 255; numpy counts them as True)."""
    src_c, dst_c = src.startswith("complex"), dst.startswith("complex")
    t = compute_type(dst)
    if src == dst:
        return f"({expr})"
    if src == "bool":
        return f"(({t})((({expr}) != 0), 0))" if dst_c else f"(({t})(({expr}) != 0))"
    if compute_type(src) == t and dst != "bool":
        return f"({expr})"
    if dst == "bool":
        return f"((uchar)((({expr}).s0 != 0) | (({expr}).s1 != 0)))" if src_c \
            else f"((uchar)(({expr}) != 0))"
    if dst_c:
        return f"convert_{t}({expr})" if src_c else f"(({t})(({expr}), 0))"
    return f"(({t})(({expr}).s0))" if src_c else f"(({t})({expr}))"


def fp64_pragma(dts):
    if any(d in FP64 for d in dts):
        return "#pragma OPENCL EXTENSION cl_khr_fp64 : enable"
    return ""


def device_fence(nv_capability):
    """A statement fencing global memory at the scope of the whole device, for hand-offs
    between work-groups. OpenCL 1.2's mem_fence need only order memory for the work-group,
    and NVIDIA compiles it so (PTX membar.cta: values stored before a flag were seen after
    it by other multiprocessors); there PTX's device-scope fence (`nv_capability`: the
    compute capability, else None)."""
    if nv_capability is None:
        return "mem_fence(CLK_GLOBAL_MEM_FENCE)"
    ptx = "fence.acq_rel.gpu" if device_acqrel(nv_capability) else "membar.gl"
    return f'asm volatile("{ptx};" ::: "memory")'


def device_acqrel(nv_capability):
    """Whether PTX's release and acquire operations at the GPU's scope are there (NVIDIA from
    compute capability 7): one ordered atomic or load in place of a fence and a plain one."""
    return nv_capability is not None and nv_capability >= (7, 0)


def device_redux(nv_capability):
    """Whether PTX's warp reductions (redux.sync) are there: NVIDIA from compute
    capability 8."""
    return nv_capability is not None and nv_capability >= (8, 0)
