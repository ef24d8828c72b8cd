//! A small seeded random generator (SplitMix64) with the distributions the
//! search needs: uniform, gamma and Dirichlet.

/// Deterministic for a given seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The internal state: `Rng::new(r.state())` continues where `r` is.
    pub fn state(&self) -> u64 {
        self.0
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform integer in [0, n), n > 0.
    pub fn below(&mut self, n: usize) -> usize {
        (self.uniform() * n as f64) as usize % n
    }

    fn normal(&mut self) -> f64 {
        // Box-Muller; 1 - u keeps the logarithm finite.
        let (u, v) = (1.0 - self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// A draw from the standard Gumbel distribution, -ln(-ln(U)).
    pub fn gumbel(&mut self) -> f64 {
        // uniform() is in [0, 1): keep U off 0 so that both logarithms are finite.
        let u = self.uniform().max(f64::MIN_POSITIVE);
        -(-u.ln()).ln()
    }

    /// Gamma(shape, 1) by Marsaglia and Tsang; shape > 0.
    pub fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let u = 1.0 - self.uniform();
            return self.gamma(shape + 1.0) * u.powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = 1.0 - self.uniform();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
    }

    /// A sample of the symmetric Dirichlet(alpha) distribution over `n`
    /// outcomes.
    pub fn dirichlet(&mut self, alpha: f64, n: usize) -> Vec<f64> {
        let mut x: Vec<f64> = (0..n).map(|_| self.gamma(alpha)).collect();
        let sum: f64 = x.iter().sum();
        if sum > 0.0 {
            x.iter_mut().for_each(|v| *v /= sum);
        } else {
            x.iter_mut().for_each(|v| *v = 1.0 / n as f64);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// Mean and variance of `n` draws.
    fn moments(n: usize, mut draw: impl FnMut() -> f64) -> (f64, f64) {
        let xs: Vec<f64> = (0..n).map(|_| draw()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        (mean, var)
    }

    #[test]
    fn gamma_has_the_moments_of_its_shape() {
        // Gamma(k, 1): mean k, variance k; shapes below 1 take the boosted
        // path. With 200,000 draws the mean's standard error is
        // sqrt(k / 200000), so 5 of them bound a false failure well below
        // one in a million.
        let mut rng = Rng::new(17);
        let n = 200_000;
        for k in [0.03, 0.3, 1.0, 2.5, 10.0] {
            let (mean, var) = moments(n, || rng.gamma(k));
            let se = (k / n as f64).sqrt();
            assert!((mean - k).abs() < 5.0 * se, "shape {k}: mean {mean}");
            // The variance's own spread: sqrt((m4 - k^2) / n), m4 = 3k^2 + 6k.
            let var_se = ((2.0 * k * k + 6.0 * k) / n as f64).sqrt();
            assert!((var - k).abs() < 5.0 * var_se, "shape {k}: variance {var}");
        }
    }

    #[test]
    fn dirichlet_has_the_moments_of_its_concentration() {
        // Symmetric Dirichlet(alpha) over n outcomes: each component has
        // mean 1/n and variance (n - 1) / (n^2 (n alpha + 1)).
        let mut rng = Rng::new(5);
        let (alpha, outcomes, draws) = (0.3, 8usize, 50_000);
        let samples: Vec<Vec<f64>> = (0..draws).map(|_| rng.dirichlet(alpha, outcomes)).collect();
        for s in &samples {
            assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-9 && s.iter().all(|&x| x >= 0.0));
        }
        let n = outcomes as f64;
        let want_var = (n - 1.0) / (n * n * (n * alpha + 1.0));
        for i in 0..outcomes {
            let mut column = samples.iter().map(|s| s[i]);
            let (mean, var) = moments(draws, || column.next().expect("one value per draw"));
            assert!((mean - 1.0 / n).abs() < 5.0 * (want_var / draws as f64).sqrt(), "component {i}: mean {mean}");
            assert!((var / want_var - 1.0).abs() < 0.05, "component {i}: variance {var}, want {want_var}");
        }
    }
}
