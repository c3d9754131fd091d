//! The command line of the measuring examples: `--flag`s and `--name value` options taken out
//! of the arguments, the rest left in order.

pub struct Args(Vec<String>);

impl Args {
    /// The program's arguments.
    pub fn from_env() -> Args {
        Args(std::env::args().skip(1).collect())
    }

    /// Whether `--name` was given (taken out).
    pub fn flag(&mut self, name: &str) -> bool {
        match self.0.iter().position(|a| a == name) {
            Some(i) => {
                self.0.remove(i);
                true
            }
            None => false,
        }
    }

    /// The value after `name` (both taken out), else `default`.
    pub fn value(&mut self, name: &str, default: &str) -> String {
        match self.0.iter().position(|a| a == name) {
            Some(i) if i + 1 < self.0.len() => {
                let value = self.0.remove(i + 1);
                self.0.remove(i);
                value
            }
            Some(_) => panic!("{name} needs a value"),
            None => default.to_string(),
        }
    }

    /// What is left, in order.
    pub fn rest(self) -> Vec<String> {
        self.0
    }
}
