//! A bfloat16 matrix product for [`super::cpu`]'s 3x3 convolutions on CPUs
//! with AVX-512 BF16 (`vdpbf16ps`: sixteen lanes, each adding the products
//! of two bf16 pairs to an f32 sum, twice the multiply-adds of an f32 FMA
//! per instruction). Inputs and weights are rounded to bf16 (8 bits of
//! mantissa); the sums stay f32.
//!
//! Operands are stored as pairs: a `u32` holds elements `2p` (low half)
//! and `2p + 1` (high half) along the summed dimension, padded with a zero
//! when that dimension is odd.

/// Whether this CPU has the instructions.
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `x` rounded to the nearest bf16 (ties to even).
#[inline]
pub fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    let rounded = (bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16) as u16;
    // A NaN stays a NaN (quiet), whatever rounding did to its payload.
    if x.is_nan() { ((bits >> 16) | 0x40) as u16 } else { rounded }
}

/// The f32 value of a bf16.
pub fn from_bf16(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// Number of pairs along a summed dimension of `k`.
pub fn pairs(k: usize) -> usize {
    k.div_ceil(2)
}

/// A `[k, n]` row-major f32 matrix as `[pairs(k), n]` bf16 pairs.
pub fn pack_rhs(rhs: &[f32], k: usize, n: usize) -> Vec<u32> {
    let mut out = vec![0u32; pairs(k) * n];
    for row in 0..k {
        for col in 0..n {
            let h = u32::from(to_bf16(rhs[row * n + col]));
            out[(row / 2) * n + col] |= if row.is_multiple_of(2) { h } else { h << 16 };
        }
    }
    out
}

/// `out[m x n] = lhs[m x pairs] * rhs[pairs x n]` (row-major; `n` a
/// multiple of 16). Call only where [`supported`].
pub fn matmul(out: &mut [f32], lhs: &[u32], rhs: &[u32], m: usize, k2: usize, n: usize) {
    assert!(n.is_multiple_of(16) && out.len() >= m * n && lhs.len() >= m * k2 && rhs.len() >= k2 * n);
    assert!(supported(), "AVX-512 BF16 matrix product on a CPU without it");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has the instructions (asserted), and the slices hold
    // the matrices the sizes describe (asserted).
    unsafe {
        x86::matmul(out, lhs, rhs, m, k2, n)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Rows of a register block: 8 rows by up to 3 vectors of 16 columns
    /// is 24 accumulators of the 32 registers.
    const ROWS: usize = 8;

    #[target_feature(enable = "avx512f,avx512bf16")]
    pub unsafe fn matmul(out: &mut [f32], lhs: &[u32], rhs: &[u32], m: usize, k2: usize, n: usize) {
        let mut c = 0;
        while c < n {
            let vectors = ((n - c) / 16).min(3);
            let mut r = 0;
            while r + ROWS <= m {
                // SAFETY: rows r..r + ROWS and columns c..c + 16 * vectors
                // are inside the matrices (the caller checked the sizes).
                unsafe {
                    match vectors {
                        3 => block::<3, ROWS>(out, lhs, rhs, r, c, k2, n),
                        2 => block::<2, ROWS>(out, lhs, rhs, r, c, k2, n),
                        _ => block::<1, ROWS>(out, lhs, rhs, r, c, k2, n),
                    }
                }
                r += ROWS;
            }
            while r < m {
                // SAFETY: as above, one row.
                unsafe {
                    match vectors {
                        3 => block::<3, 1>(out, lhs, rhs, r, c, k2, n),
                        2 => block::<2, 1>(out, lhs, rhs, r, c, k2, n),
                        _ => block::<1, 1>(out, lhs, rhs, r, c, k2, n),
                    }
                }
                r += 1;
            }
            c += 16 * vectors;
        }
    }

    /// `R` rows from `r` by `V` vectors of columns from `c`.
    #[target_feature(enable = "avx512f,avx512bf16")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn block<const V: usize, const R: usize>(
        out: &mut [f32],
        lhs: &[u32],
        rhs: &[u32],
        r: usize,
        c: usize,
        k2: usize,
        n: usize,
    ) {
        let mut acc = [[_mm512_setzero_ps(); V]; R];
        let (a, b) = (lhs.as_ptr(), rhs.as_ptr());
        for p in 0..k2 {
            // SAFETY: p < k2 and the columns are inside rhs's rows of n.
            let bv: [__m512bh; V] = std::array::from_fn(|v| unsafe {
                std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(b.add(p * n + c + 16 * v).cast()))
            });
            for (i, row) in acc.iter_mut().enumerate() {
                // SAFETY: row r + i < m and p < k2.
                let pair = unsafe { *a.add((r + i) * k2 + p) };
                // SAFETY: both are 64-byte vectors of plain bits.
                let av = unsafe { std::mem::transmute::<__m512i, __m512bh>(_mm512_set1_epi32(pair as i32)) };
                for v in 0..V {
                    row[v] = _mm512_dpbf16_ps(row[v], av, bv[v]);
                }
            }
        }
        for (i, row) in acc.iter().enumerate() {
            for (v, &x) in row.iter().enumerate() {
                // SAFETY: row r + i < m, columns inside out's rows of n.
                unsafe { _mm512_storeu_ps(out.as_mut_ptr().add((r + i) * n + c + 16 * v), x) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `value` as element `e` of a row of pairs.
    fn put(row: &mut [u32], e: usize, value: f32) {
        let h = u32::from(to_bf16(value));
        let w = &mut row[e / 2];
        *w = if e.is_multiple_of(2) { (*w & 0xffff_0000) | h } else { (*w & 0xffff) | (h << 16) };
    }

    #[test]
    fn rounding_to_bf16_is_to_the_nearest() {
        assert_eq!(from_bf16(to_bf16(1.0)), 1.0);
        assert_eq!(from_bf16(to_bf16(-2.5)), -2.5);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
        assert_eq!(from_bf16(to_bf16(1.0 + 1.0 / 256.0)), 1.0);
        assert_eq!(from_bf16(to_bf16(1.0 + 3.0 / 512.0)), 1.0 + 1.0 / 128.0);
        assert!(from_bf16(to_bf16(f32::NAN)).is_nan());
    }

    #[test]
    fn the_product_matches_f32_on_bf16_inputs() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX-512 BF16");
            return;
        }
        let (m, k, n) = (19, 27, 48);
        let value = |i: usize| ((i * 37 % 101) as f32 - 50.0) / 16.0;
        let lhs_f: Vec<f32> = (0..m * k).map(value).collect();
        let rhs_f: Vec<f32> = (0..k * n).map(|i| value(i + 7)).collect();
        let mut lhs = vec![0u32; m * pairs(k)];
        for r in 0..m {
            for e in 0..k {
                put(&mut lhs[r * pairs(k)..(r + 1) * pairs(k)], e, lhs_f[r * k + e]);
            }
        }
        let rhs = pack_rhs(&rhs_f, k, n);
        let mut out = vec![0.0; m * n];
        matmul(&mut out, &lhs, &rhs, m, pairs(k), n);
        for r in 0..m {
            for c in 0..n {
                let want: f32 =
                    (0..k).map(|e| from_bf16(to_bf16(lhs_f[r * k + e])) * from_bf16(to_bf16(rhs_f[e * n + c]))).sum();
                assert!((out[r * n + c] - want).abs() < 1e-3, "({r}, {c}): {} vs {want}", out[r * n + c]);
            }
        }
    }
}
