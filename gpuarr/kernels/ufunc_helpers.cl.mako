## Helper functions the ufunc snippets call, emitted once per (helper, type) a kernel needs.
## Inputs: helpers  tuple of (helper name, T) where T is an OpenCL C scalar type (or float2 /
##                  double2 for the complex helpers; R is then their real type).
## Defines: ga_<helper>_<T>(...) for each entry. numpy's semantics: integer division by 0
## gives 0, INT_MIN // -1 wraps, floor division and remainder take the divisor's sign,
## shifts past the width give 0 (or -1 for negative values shifted right). The complex
## elementary functions (cexp ... cpow) give C99 Annex G's special values and branch cuts;
## a helper calls only helpers listed before it (kernels/ufunc_ops.py lists them in order).
% for helper, T in helpers:
<%
    R = {'float2': 'float', 'double2': 'double'}.get(T, T)
    F, L = ('_F', 'FLT') if R == 'float' else ('', 'DBL')  # constants' suffix, limits' prefix
    TINY_UP, TINY_DOWN = ('0x1p48f', '0x1p-24f') if R == 'float' else ('0x1p108', '0x1p-54')
%>\
% if helper == 'floordiv':
inline ${T} ga_floordiv_${T}(${T} a, ${T} b) {
    if (b == 0) return 0;
    if (b == -1) return (${T})(0 - a);
    ${T} q = a / b;
    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
% elif helper == 'mod':
inline ${T} ga_mod_${T}(${T} a, ${T} b) {
    if (b == 0 || b == -1) return 0;
    ${T} r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
% elif helper == 'fmod_int':
inline ${T} ga_fmod_int_${T}(${T} a, ${T} b) {
    return (b == 0 || b == -1) ? 0 : a % b;
}
% elif helper == 'floordivf' or helper == 'modf':
## numpy's npy_divmod: the quotient rounded so that a == q * b + r with r of b's sign.
inline ${T} ga_${helper}_${T}(${T} a, ${T} b) {
    ${T} mod = fmod(a, b);
    if (b == 0) return ${'a / b' if helper == 'floordivf' else 'mod'};
    ${T} div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) { mod += b; div -= 1; }
    } else {
        mod = copysign((${T})0, b);
    }
% if helper == 'floordivf':
    if (div != 0) {
        ${T} fl = floor(div);
        if (div - fl > (${T})0.5) fl += 1;
        return fl;
    }
    return copysign((${T})0, a / b);
% else:
    return mod;
% endif
}
% elif helper == 'ipow':
inline ${T} ga_ipow_${T}(${T} base, ${T} exp) {
    ${T} result = 1;
    if (exp < 0) return base == 1 ? 1 : (base == (${T})-1 ? ((exp & 1) ? -1 : 1) : 0);
    while (exp) {
        if (exp & 1) result *= base;
        exp >>= 1;
        base *= base;
    }
    return result;
}
% elif helper == 'lshift':
inline ${T} ga_lshift_${T}(${T} a, ${T} b) {
    return (b >= 0 && b < (${T})(sizeof(${T}) * 8)) ? (${T})(a << b) : (${T})0;
}
% elif helper == 'rshift':
inline ${T} ga_rshift_${T}(${T} a, ${T} b) {
    if (b >= 0 && b < (${T})(sizeof(${T}) * 8)) return (${T})(a >> b);
    return a < 0 ? (${T})-1 : (${T})0;
}
% elif helper == 'logs':
## log, log2, log10 and log1p. Where GA_OWN_LOG is defined (PoCL's CPU devices, whose log
## calls a library function per element: 10x slower than this, 5-10x slower than numpy),
## fdlibm's e_log.c in double, without branches, so that the compiler vectorises it across
## work-items: 0.5 ulp for float, 1-2 ulp for double against numpy. Elsewhere OpenCL's own.
#if defined(GA_OWN_LOG) && defined(cl_khr_fp64)
## Contraction allowed here (the file turns it off: numpy rounds a * b + c twice): PoCL
## vectorises these functions only with it (2 ms for 2^22 floats, 18 ms without).
#pragma OPENCL FP_CONTRACT ON
#ifndef GA_LOG_REDUCED
#define GA_LOG_REDUCED
#define GA_INLINE inline __attribute__((always_inline))
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
## log(y) where x = 2^k y, y in [sqrt(2)/2, sqrt(2)), for finite x > 0 (subnormals scaled
## first); *k = k.
GA_INLINE double ga_log_reduced(double x, double *k) {
    int sub = x < 0x1p-1022;
    x = sub ? x * 0x1p54 : x;
    long bits = as_long(x), m = bits & 0x000fffffffffffffL;
    long up = (m + 0x00095f619980c433L) & 0x0010000000000000L;  /* mantissa >= sqrt(2) */
    double f = as_double(m | (up ^ 0x3ff0000000000000L)) - 1.0;
    *k = (double)((int)(bits >> 52) - 1023 - (sub ? 54 : 0) + (int)(up >> 52));
    double s = f / (2.0 + f), z = s * s, w = z * z;
    double r = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01
                                                    + w * 1.531383769920937332e-01))
             + z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01
                    + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
    double hfsq = 0.5 * f * f;
    return f - (hfsq - s * (hfsq + r));
}
## log x for finite x > 0.
GA_INLINE double ga_log_finite(double x) {
    double k, ly = ga_log_reduced(x, &k);
    return k * 6.93147180369123816490e-01 + (ly + k * 1.90821492927058770002e-10);
}
## log's special values at x around the finite result r.
GA_INLINE double ga_log_special(double x, double r) {
    r = x == 0 ? -INFINITY : (x == INFINITY ? INFINITY : r);
    return (x < 0 || isnan(x)) ? NAN : r;
}
#endif
GA_INLINE ${T} ga_log_${T}(${T} x) {
    return (${T})ga_log_special(x, ga_log_finite(x));
}
GA_INLINE ${T} ga_log2_${T}(${T} x) {
    double k, ly = ga_log_reduced(x, &k);
    return (${T})ga_log_special(x, k + ly * M_LOG2E);
}
GA_INLINE ${T} ga_log10_${T}(${T} x) {
    double k, ly = ga_log_reduced(x, &k);
    return (${T})ga_log_special(x, k * 3.01029995663981195214e-01 + ly * M_LOG10E);
}
## log(u) * x / (u - 1) with u = 1 + x: the factor undoes u's rounding (Goldberg).
GA_INLINE ${T} ga_log1p_${T}(${T} x) {
    double xd = x, u = 1.0 + xd, r = ga_log_finite(u);
    r = u == 1.0 ? xd : r * (xd / (u - 1.0));
    return (${T})ga_log_special(u, xd == INFINITY ? INFINITY : r);
}
#pragma OPENCL FP_CONTRACT OFF
#else
inline ${T} ga_log_${T}(${T} x) { return log(x); }
inline ${T} ga_log2_${T}(${T} x) { return log2(x); }
inline ${T} ga_log10_${T}(${T} x) { return log10(x); }
inline ${T} ga_log1p_${T}(${T} x) { return log1p(x); }
#endif
% elif helper == 'pow':
## x ** y. Where GA_OWN_LOG is defined, float's: exp(y log|x|) in double (|y log x| < 2^8,
## so the double's error stays far below float's ulp), with C99's special values worked
## out without branches (PoCL then vectorises it: 2^22 floats 197 -> 9 ms); else, and for
## double (whose result would need log in double-double), OpenCL's pow.
% if T == 'float':
#if defined(GA_OWN_LOG) && defined(cl_khr_fp64)
#pragma OPENCL FP_CONTRACT ON
GA_INLINE float ga_pow_float(float x, float y) {
    double ax = fabs((double)x), yd = y;
    double r = exp(yd * ga_log_special(ax, ga_log_finite(ax)));
    int integer = y == rint(y), odd = integer && rint(y * 0.5f) != y * 0.5f;
    r = (signbit(x) && odd) ? -r : r;                    /* -0.0 and -inf included */
    r = (x < 0 && isfinite(x) && !integer) ? NAN : r;
    r = (ax == 1 && isinf(y)) ? 1.0 : r;
    r = (isnan(x) || isnan(y)) ? NAN : r;
    r = (y == 0 || x == 1) ? 1.0 : r;
    return (float)r;
}
#pragma OPENCL FP_CONTRACT OFF
#else
inline float ga_pow_float(float x, float y) { return pow(x, y); }
#endif
% else:
inline ${T} ga_pow_${T}(${T} x, ${T} y) { return pow(x, y); }
% endif
% elif helper == 'logaddexp':
inline ${T} ga_logaddexp_${T}(${T} a, ${T} b) {
    if (a == b) return a + (${T})M_LN2;
    ${T} d = a - b;
    return d > 0 ? a + log1p(exp(-d)) : (d <= 0 ? b + log1p(exp(d)) : d);
}
% elif helper == 'logaddexp2':
inline ${T} ga_logaddexp2_${T}(${T} a, ${T} b) {
    if (a == b) return a + 1;
    ${T} d = a - b;
    return d > 0 ? a + log1p(exp2(-d)) * (${T})M_LOG2E
                 : (d <= 0 ? b + log1p(exp2(d)) * (${T})M_LOG2E : d);
}
% elif helper in ('nextafter_half', 'nextafter_half_keep_x'):
## float16 stored as half, computed as float: step the half's bits, not the float's.
## The bits are computed arithmetically (no pointer punning, which drivers treat unevenly).
inline ushort ga_half_bits_${helper}_${T}(float a) {
    uint b = as_uint(a), sign = (b >> 16) & 0x8000u, mag = b & 0x7fffffffu;
    if (mag == 0) return (ushort)sign;
    int e = (int)(mag >> 23) - 127 + 15;
    uint m = (mag & 0x7fffffu) | 0x800000u;
    if (e >= 31) return (ushort)(sign | 0x7c00u);
    if (e <= 0) return (ushort)(sign | (m >> (14 - e)));
    return (ushort)(sign | ((uint)e << 10) | ((m >> 13) & 0x3ffu));
}
inline float ga_half_value_${helper}_${T}(ushort h) {
    float sign = (h & 0x8000u) ? -1.0f : 1.0f;
    uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 31) return m ? NAN : sign * INFINITY;
    if (e == 0) return sign * ldexp((float)m, -24);
    return sign * ldexp((float)(m | 0x400u), (int)e - 25);
}
inline float ga_nextafter_half_${T}(float a, float b) {
    if (isnan(a) || isnan(b)) return a + b;
    if (a == b) return ${'a' if helper == 'nextafter_half_keep_x' else 'b'};  // -0.0 vs 0.0
    ushort bits = ga_half_bits_${helper}_${T}(a);
    if (a == 0) bits = (b > 0) ? (ushort)1 : (ushort)0x8001;
    else if ((a < b) == (a > 0)) bits += 1;
    else bits -= 1;
    return ga_half_value_${helper}_${T}(bits);
}
% elif helper == 'cmul':
inline ${T} ga_cmul_${T}(${T} a, ${T} b) {
    return (${T})(a.s0 * b.s0 - a.s1 * b.s1, a.s0 * b.s1 + a.s1 * b.s0);
}
% elif helper == 'cdiv':
## Smith's algorithm, as numpy uses, to avoid needless overflow.
inline ${T} ga_cdiv_${T}(${T} a, ${T} b) {
    ${R} abs_br = fabs(b.s0), abs_bi = fabs(b.s1);
    if (abs_br >= abs_bi) {
        if (abs_br == 0 && abs_bi == 0) return (${T})(a.s0 / abs_br, a.s1 / abs_bi);
        ${R} rat = b.s1 / b.s0, scl = 1 / (b.s0 + b.s1 * rat);
        return (${T})((a.s0 + a.s1 * rat) * scl, (a.s1 - a.s0 * rat) * scl);
    }
    ${R} rat = b.s0 / b.s1, scl = 1 / (b.s1 + b.s0 * rat);
    return (${T})((a.s0 * rat + a.s1) * scl, (a.s1 * rat - a.s0) * scl);
}
% elif helper == 'csign':
inline ${T} ga_csign_${T}(${T} a) {
    ${R} m = hypot(a.s0, a.s1);
    return m == 0 ? (${T})(0, 0) : (${T})(a.s0 / m, a.s1 / m);
}
## ---- complex elementary functions: C99 Annex G's special values and branch cuts ----
## Non-finite inputs are handled first, case by case; finite ones by formulas that avoid
## overflow of intermediates (exp(x) split in halves, scaled square roots) and cancellation
## (log1p of |z|^2 - 1 near the unit circle; Kahan's formulas for the inverse functions).
% elif helper == 'cexp':
inline ${T} ga_cexp_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1;
    if (isinf(x)) {
        if (x > 0 && !isfinite(y)) return (${T})(x, (${R})NAN);
        if (x < 0 && !isfinite(y)) return (${T})(0, 0);
    }
    if (y == 0) return (${T})(exp(x), y);
    ${R} c, s = sincos(y, &c);
    if (x > 80) {  // exp(x) alone may overflow where exp(x) cos(y) does not
        ${R} h = exp(x * (${R})0.5);
        return (${T})(h * c * h, h * s * h);
    }
    ${R} e = exp(x);
    return (${T})(e * c, e * s);
}
% elif helper == 'cexp2':
inline ${T} ga_cexp2_${T}(${T} z) {
    return ga_cexp_${T}(z * (${R})M_LN2${F});
}
% elif helper == 'cexpm1':
## expm1(x) cos(y) - 2 sin^2(y/2) + i exp(x) sin(y): no cancellation near 0.
inline ${T} ga_cexpm1_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1;
    if (isinf(x) && !isfinite(y))
        return x > 0 ? (${T})(x, (${R})NAN) : (${T})(-1, copysign((${R})0, y));
    if (y == 0) return (${T})(expm1(x) + (${R})0, y);  // + 0: expm1(-0 + 0i) is +0 + 0i
    if (x > 1) {
        ${T} w = ga_cexp_${T}(z);
        return (${T})(w.s0 - 1, w.s1);
    }
    ${R} c, s = sincos(y, &c);
    if (isinf(x)) return (${T})(-1, (${R})0 * s);
    ${R} h = sin(y * (${R})0.5);
    return (${T})(expm1(x) * c - 2 * h * h, exp(x) * s);
}
% elif helper == 'clog':
## log|z| + i arg(z); near |z| = 1, log1p(|z|^2 - 1) with the squares split exactly by fma.
inline ${T} ga_clog_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1, im = atan2(y, x);
    if (isinf(x) || isinf(y)) return (${T})(INFINITY, im);
    if (isnan(x) || isnan(y)) return (${T})(NAN, NAN);
    ${R} hi = fmax(fabs(x), fabs(y)), lo = fmin(fabs(x), fabs(y));
    if (hi < 2 && hi * hi + lo * lo > (${R})0.5) {
        ${R} q = hi * hi, p = lo * lo;
        ${R} u = ((q - 1) + p) + (fma(hi, hi, -q) + fma(lo, lo, -p));
        return (${T})((${R})0.5 * log1p(u), im);
    }
    return (${T})(log(hypot(x, y)), im);
}
% elif helper == 'clog1p':
inline ${T} ga_clog1p_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1;
    if (fabs(x) < (${R})0.5 && fabs(y) < (${R})0.5)  // |1 + z|^2 - 1 = x (2 + x) + y^2
        return (${T})((${R})0.5 * log1p(x * (2 + x) + y * y), atan2(y, 1 + x));
    return ga_clog_${T}((${T})(1 + x, y));
}
% elif helper in ('clog2', 'clog10'):
inline ${T} ga_${helper}_${T}(${T} z) {
    return ga_clog_${T}(z) * (${R})${'M_LOG2E' if helper == 'clog2' else 'M_LOG10E'}${F};
}
% elif helper == 'csqrt':
## sqrt((|x| + |z|) / 2) and y / (2 that), with huge and tiny z scaled by powers of 4.
inline ${T} ga_csqrt_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1;
    if (isinf(y)) return (${T})(INFINITY, y);
    if (isnan(x)) return (${T})(x, x);
    if (isinf(x)) {
        if (x > 0) return (${T})(x, isnan(y) ? y : copysign((${R})0, y));
        return (${T})(isnan(y) ? y : 0, copysign((${R})INFINITY, y));
    }
    if (isnan(y)) return (${T})(y, y);
    if (x == 0 && y == 0) return (${T})(0, y);
    ${R} scale = 1;
    if (fabs(x) > ${L}_MAX / 4 || fabs(y) > ${L}_MAX / 4) {
        x *= (${R})0.25;
        y *= (${R})0.25;
        scale = 2;
    } else if (fabs(x) < ${L}_MIN * 4 && fabs(y) < ${L}_MIN * 4) {
        x *= ${TINY_UP};
        y *= ${TINY_UP};
        scale = ${TINY_DOWN};
    }
    ${R} t = sqrt((fabs(x) + hypot(x, y)) * (${R})0.5);
    if (x >= 0) return (${T})(t * scale, y / (2 * t) * scale);
    return (${T})(fabs(y) / (2 * t) * scale, copysign(t, y) * scale);
}
% elif helper == 'csinh':
inline ${T} ga_csinh_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1, c, s;
    if (!isfinite(x) || !isfinite(y)) {
        if (x == 0) return (${T})(x, y - y);
        if (y == 0) return z;
        if (!isinf(x)) return (${T})(NAN, NAN);
        if (!isfinite(y)) return (${T})(x, y - y);
        s = sincos(y, &c);
        return (${T})(x * c, INFINITY * s);
    }
    if (y == 0) return (${T})(sinh(x), y);
    s = sincos(y, &c);
    if (fabs(x) > 20) {  // sinh x ~ cosh x ~ exp(|x|) / 2, in halves
        ${R} h = exp(fabs(x) * (${R})0.5), hh = h * (${R})0.5;
        return (${T})((x < 0 ? -hh : hh) * c * h, hh * s * h);
    }
    return (${T})(sinh(x) * c, cosh(x) * s);
}
% elif helper == 'ccosh':
inline ${T} ga_ccosh_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1, c, s;
    if (!isfinite(x) || !isfinite(y)) {
        if (x == 0) return (${T})(y - y, x);
        if (y == 0) return (${T})(fabs(x), copysign((${R})0, x) * y);
        if (!isinf(x)) return (${T})(NAN, NAN);
        if (!isfinite(y)) return (${T})(INFINITY, y - y);
        s = sincos(y, &c);
        return (${T})(INFINITY * c, x * s);
    }
    if (y == 0) return (${T})(cosh(x), x * y);
    s = sincos(y, &c);
    if (fabs(x) > 20) {
        ${R} h = exp(fabs(x) * (${R})0.5), hh = h * (${R})0.5;
        return (${T})(hh * c * h, (x < 0 ? -hh : hh) * s * h);
    }
    return (${T})(cosh(x) * c, sinh(x) * s);
}
% elif helper == 'ctanh':
## (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y): a sum of squares below.
inline ${T} ga_ctanh_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1;
    if (!isfinite(x) || !isfinite(y)) {
        if (isinf(x)) return (${T})(copysign((${R})1, x), copysign((${R})0, y));
        if (x == 0) return (${T})(x, y - y);
        if (y == 0) return z;
        return (${T})(NAN, NAN);
    }
    ${R} c, s = sincos(y, &c);
    if (fabs(x) > 20) return (${T})(copysign((${R})1, x), 4 * s * c * exp(-2 * fabs(x)));
    ${R} sh = sinh(x), d = sh * sh + c * c;
    return (${T})(sh * cosh(x) / d, s * c / d);
}
% elif helper in ('csin', 'ctan'):
## sin z = -i sinh(iz), tan z = -i tanh(iz)
inline ${T} ga_${helper}_${T}(${T} z) {
    ${T} w = ga_${helper}h_${T}((${T})(-z.s1, z.s0));
    return (${T})(w.s1, -w.s0);
}
% elif helper == 'ccos':
inline ${T} ga_ccos_${T}(${T} z) {
    return ga_ccosh_${T}((${T})(-z.s1, z.s0));
}
% elif helper == 'cacos':
## Kahan's formulas (Branch Cuts for Complex Elementary Functions, 1987) for finite z.
inline ${T} ga_cacos_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1;
    if (isnan(x) || isnan(y)) {
        if (isinf(y)) return (${T})(x, -y);
        if (isinf(x)) return (${T})(y, -INFINITY);
        if (x == 0) return (${T})(M_PI_2${F}, y);
        return (${T})(NAN, NAN);
    }
    if (isinf(y)) return (${T})(isinf(x) ? (x < 0 ? 3 * M_PI_4${F} : M_PI_4${F}) : M_PI_2${F}, -y);
    if (isinf(x)) return (${T})(x < 0 ? M_PI${F} : 0, copysign((${R})INFINITY, -y));
    ${T} s1 = ga_csqrt_${T}((${T})(1 - x, -y)), s2 = ga_csqrt_${T}((${T})(1 + x, y));
    return (${T})(2 * atan2(s1.s0, s2.s0), asinh(s2.s0 * s1.s1 - s2.s1 * s1.s0));
}
% elif helper == 'cacosh':
## acosh z = +-i acos z, the sign giving a real part >= 0 (and arg's sign that of imag z)
inline ${T} ga_cacosh_${T}(${T} z) {
    ${T} w = ga_cacos_${T}(z);
    return (${T})(fabs(w.s1), copysign(w.s0, z.s1));
}
% elif helper == 'casin_finite':
inline ${T} ga_casin_finite_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1;
    ${T} s1 = ga_csqrt_${T}((${T})(1 - x, -y)), s2 = ga_csqrt_${T}((${T})(1 + x, y));
    return (${T})(atan2(x, s1.s0 * s2.s0 - s1.s1 * s2.s1),
                  asinh(s1.s0 * s2.s1 - s1.s1 * s2.s0));
}
% elif helper == 'casinh':
## asinh z = -i asin(iz)
inline ${T} ga_casinh_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1;
    if (isnan(x)) {
        if (isinf(y)) return (${T})(INFINITY, x);
        return (${T})(x, y == 0 ? y : x);
    }
    if (isinf(x))
        return (${T})(x, isnan(y) ? y : copysign(isinf(y) ? M_PI_4${F} : 0, y));
    if (isinf(y)) return (${T})(copysign((${R})INFINITY, x), copysign(M_PI_2${F}, y));
    if (isnan(y)) return (${T})(y, y);
    ${T} w = ga_casin_finite_${T}((${T})(-y, x));
    return (${T})(w.s1, -w.s0);
}
% elif helper in ('casin', 'catan'):
## asin z = -i asinh(iz), atan z = -i atanh(iz)
inline ${T} ga_${helper}_${T}(${T} z) {
    ${T} w = ga_${helper}h_${T}((${T})(-z.s1, z.s0));
    return (${T})(w.s1, -w.s0);
}
% elif helper == 'catanh':
## log((1 + z) / (1 - z)) / 2 from sums of squares; 1/z where z is huge.
inline ${T} ga_catanh_${T}(${T} z) {
    ${R} x = z.s0, y = z.s1, ax = fabs(x);
    if (isnan(x) || isnan(y)) {
        if (isinf(x)) return (${T})(copysign((${R})0, x), y);
        if (isinf(y)) return (${T})(copysign((${R})0, x), copysign(M_PI_2${F}, y));
        if (x == 0) return z;
        return (${T})(NAN, NAN);
    }
    if (isinf(x) || isinf(y)) return (${T})(copysign((${R})0, x), copysign(M_PI_2${F}, y));
    if (ax > (${R})1e10 || fabs(y) > (${R})1e10) {
        ${R} h = hypot(x, y);
        return (${T})(x / h / h, copysign(M_PI_2${F}, y));
    }
    if (ax == 1 && y == 0) return (${T})(copysign((${R})INFINITY, x), y);
    ${R} d = (1 - ax) * (1 - ax) + y * y;
    ${R} re = d < (${R})1e-4
        ? (${R})0.5 * (log(hypot(1 + ax, y)) - log(hypot(1 - ax, y)))
        : (${R})0.25 * log1p(4 * ax / d);
    return (${T})(copysign(re, x), (${R})0.5 * atan2(2 * y, (1 - ax) * (1 + ax) - y * y));
}
% elif helper == 'cmul_inf':
## C99 Annex G's product (G.5.1): where the plain product is NaN + i NaN and an operand is
## infinite (or a partial product overflowed), the infinity is recovered.
inline ${T} ga_cmul_inf_${T}(${T} z, ${T} w) {
    ${R} a = z.s0, b = z.s1, c = w.s0, d = w.s1;
    ${R} ac = a * c, bd = b * d, ad = a * d, bc = b * c, x = ac - bd, y = ad + bc;
    if (!isnan(x) || !isnan(y)) return (${T})(x, y);
    int recalc = 0;
    if (isinf(a) || isinf(b)) {
        a = copysign(isinf(a) ? (${R})1 : (${R})0, a);
        b = copysign(isinf(b) ? (${R})1 : (${R})0, b);
        if (isnan(c)) c = copysign((${R})0, c);
        if (isnan(d)) d = copysign((${R})0, d);
        recalc = 1;
    }
    if (isinf(c) || isinf(d)) {
        c = copysign(isinf(c) ? (${R})1 : (${R})0, c);
        d = copysign(isinf(d) ? (${R})1 : (${R})0, d);
        if (isnan(a)) a = copysign((${R})0, a);
        if (isnan(b)) b = copysign((${R})0, b);
        recalc = 1;
    }
    if (!recalc && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {
        if (isnan(a)) a = copysign((${R})0, a);
        if (isnan(b)) b = copysign((${R})0, b);
        if (isnan(c)) c = copysign((${R})0, c);
        if (isnan(d)) d = copysign((${R})0, d);
        recalc = 1;
    }
    if (!recalc) return (${T})(x, y);
    return (${T})(INFINITY * (a * c - b * d), INFINITY * (a * d + b * c));
}
% elif helper == 'cpow':
## numpy's complex power: z**0 = 1, 0**w = 0 where real(w) > 0 (else NaN), integer
## exponents below 100 in magnitude by repeated squaring, exp(w log z) otherwise.
inline ${T} ga_cpow_${T}(${T} a, ${T} b) {
    if (b.s0 == 0 && b.s1 == 0) return (${T})(1, 0);
    if (a.s0 == 0 && a.s1 == 0) return b.s0 > 0 ? (${T})(0, 0) : (${T})(NAN, NAN);
    if (b.s1 == 0 && b.s0 == rint(b.s0) && fabs(b.s0) < 100) {
        int n = (int)b.s0, k = abs(n);
        if (n == 1) return a;
        if (n == 2) return ga_cmul_${T}(a, a);
        if (n == 3) return ga_cmul_${T}(ga_cmul_${T}(a, a), a);
        ${T} r = (${T})(1, 0), p = a;
        for (; k; k >>= 1) {
            if (k & 1) r = ga_cmul_${T}(r, p);
            if (k > 1) p = ga_cmul_${T}(p, p);
        }
        return n < 0 ? ga_cdiv_${T}((${T})(1, 0), r) : r;
    }
    return ga_cexp_${T}(ga_cmul_inf_${T}(b, ga_clog_${T}(a)));
}
% endif
% endfor
