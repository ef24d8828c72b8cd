//! What the in-process USI tests share: a source of uniform evaluators
//! (no net) and an output buffer the test can read.

use pantheon::mcts::{Evaluator, UniformEvaluator};
use pantheon::nn::{LoadError, WeightsError};
use pantheon::rules::Variant;
use pantheon::usi::Networks;
use std::io::Write;
use std::sync::Arc;

/// Evaluators without a net: the session's searches are cheap. A model
/// file is refused, as a missing one would be.
pub struct Uniform;

impl Networks for Uniform {
    fn load(&mut self, _: Variant, model: &str, _: &str, _: &str, _: usize) -> Result<Arc<dyn Evaluator>, LoadError> {
        if model.is_empty() {
            return Ok(Arc::new(UniformEvaluator));
        }
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let source = WeightsError::Read { path: model.to_string(), source: missing };
        Err(LoadError::File { path: model.to_string(), source })
    }
}

/// An output buffer shared with the test.
#[derive(Clone, Default)]
pub struct Buffer(pub Arc<parking_lot::Mutex<Vec<u8>>>);

impl Buffer {
    /// What the session has written so far.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().clone()).expect("the engine writes UTF-8")
    }
}

impl Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
