//! Reader for CTranslate2 `model.bin` files (binary versions 4 to 6).
//!
//! Layout (little endian): u32 version, string spec name, u32 spec revision,
//! u32 variable count, then per variable: string name, u8 rank, u32 dims[rank],
//! u8 dtype, u32 byte count, data; then u32 alias count and (alias, target)
//! string pairs. Strings are a u16 length (including a trailing NUL) and bytes.
//!
//! Only an index is built up front; tensor data is read on demand, one tensor
//! (or a row range of one) at a time.

use std::collections::HashMap;
use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::Ct2Error;
use super::dtype::DType;
use super::header::HeaderReader;

const MIN_VERSION: u32 = 4;
const MAX_VERSION: u32 = 6;
const MAX_RANK: u8 = 8;
/// Smallest possible serialized variable: name (u16 + NUL), rank, dtype, byte count.
const MIN_VARIABLE_BYTES: u64 = 2 + 1 + 1 + 1 + 4;
/// Smallest possible alias: two strings holding only their NUL.
const MIN_ALIAS_BYTES: u64 = 2 * 3;
/// Bytes read per chunk while converting tensor data.
const CHUNK_BYTES: usize = 1 << 20;

#[derive(Clone, Debug)]
pub(super) struct Variable {
    pub shape: Vec<u64>,
    pub dtype: DType,
    offset: u64,
}

impl Variable {
    /// Elements per leading-dimension row (1 for vectors and scalars).
    fn row_len(&self) -> u64 {
        self.shape.iter().skip(1).product()
    }

    fn rows(&self) -> u64 {
        self.shape.first().copied().unwrap_or(1)
    }
}

pub(super) struct Ct2Model {
    path: PathBuf,
    file: File,
    pub spec_name: String,
    variables: HashMap<String, Variable>,
    aliases: HashMap<String, String>,
}

impl Ct2Model {
    /// Opens `path` and indexes its variables and aliases without loading data.
    pub fn open(path: &Path) -> Result<Self, Ct2Error> {
        let file = File::open(path).map_err(|e| Ct2Error::opening(path, e))?;
        let mut r = HeaderReader::new(&file, path)?;

        let version = r.u32("the binary version")?;
        if !(MIN_VERSION..=MAX_VERSION).contains(&version) {
            return Err(Ct2Error::UnsupportedVersion {
                path: path.to_path_buf(),
                version,
            });
        }
        let spec_name = r.string("the model specification name")?;
        let _revision = r.u32("the specification revision")?;

        let count = r.u32("the variable count")? as u64;
        if count > r.remaining() / MIN_VARIABLE_BYTES {
            return Err(r.malformed(format!(
                "it declares {count} variables, more than the file can hold"
            )));
        }
        // The count is only bounded by the file size: do not trust it for allocation.
        let mut variables = HashMap::with_capacity(count.min(4096) as usize);
        for index in 0..count {
            let what = format!("variable {index} of {count}");
            let name = r.string(&what)?;
            let rank = r.u8(&what)?;
            if rank > MAX_RANK {
                return Err(r.malformed(format!("variable `{name}` has rank {rank}")));
            }
            let mut shape = Vec::with_capacity(rank as usize);
            for _ in 0..rank {
                shape.push(r.u32(&what)? as u64);
            }
            let dtype_id = r.u8(&what)?;
            let dtype = DType::from_id(dtype_id).ok_or_else(|| {
                r.malformed(format!(
                    "variable `{name}` has unknown data type id {dtype_id}"
                ))
            })?;
            let num_bytes = r.u32(&what)? as u64;
            let expected = shape
                .iter()
                .try_fold(dtype.size() as u64, |acc, &d| acc.checked_mul(d))
                .ok_or_else(|| {
                    r.malformed(format!("variable `{name}` has absurd dimensions {shape:?}"))
                })?;
            if expected != num_bytes {
                return Err(r.malformed(format!(
                    "variable `{name}` with shape {shape:?} and type {} should hold {expected} bytes, not {num_bytes}",
                    dtype.name()
                )));
            }
            let offset = r.position();
            r.skip(num_bytes, &format!("the data of variable `{name}`"))?;
            if variables
                .insert(
                    name.clone(),
                    Variable {
                        shape,
                        dtype,
                        offset,
                    },
                )
                .is_some()
            {
                return Err(r.malformed(format!("variable `{name}` appears twice")));
            }
        }

        let n_aliases = r.u32("the alias count")? as u64;
        if n_aliases > r.remaining() / MIN_ALIAS_BYTES {
            return Err(r.malformed(format!(
                "it declares {n_aliases} aliases, more than the file can hold"
            )));
        }
        let mut aliases = HashMap::new();
        for index in 0..n_aliases {
            let what = format!("alias {index} of {n_aliases}");
            let alias = r.string(&what)?;
            let target = r.string(&what)?;
            if !variables.contains_key(&target) {
                return Err(r.malformed(format!(
                    "alias `{alias}` points to unknown variable `{target}`"
                )));
            }
            aliases.insert(alias, target);
        }
        drop(r);

        Ok(Self {
            path: path.to_path_buf(),
            file,
            spec_name,
            variables,
            aliases,
        })
    }

    /// All variable and alias names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.variables
            .keys()
            .chain(self.aliases.keys())
            .map(String::as_str)
    }

    pub fn find(&self, name: &str) -> Option<&Variable> {
        let target = self.aliases.get(name).map(String::as_str).unwrap_or(name);
        self.variables.get(target)
    }

    pub fn get(&self, name: &str) -> Result<&Variable, Ct2Error> {
        self.find(name).ok_or_else(|| Ct2Error::MissingVariable {
            path: self.path.clone(),
            name: name.to_string(),
        })
    }

    /// Reads an integer scalar such as `encoder/num_heads`.
    pub fn scalar_int(&mut self, name: &str) -> Result<Option<i64>, Ct2Error> {
        let Some(var) = self.find(name).cloned() else {
            return Ok(None);
        };
        if !var.shape.is_empty() {
            return Ok(None);
        }
        let mut buf = [0u8; 4];
        let size = var.dtype.size();
        self.read_at(var.offset, &mut buf[..size], name)?;
        Ok(Some(match var.dtype {
            DType::I8 => buf[0] as i8 as i64,
            DType::I16 => i16::from_le_bytes([buf[0], buf[1]]) as i64,
            DType::I32 => i32::from_le_bytes(buf) as i64,
            _ => return Ok(None),
        }))
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8], name: &str) -> Result<(), Ct2Error> {
        let path = self.path.clone();
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_exact(buf))
            .map_err(|source| {
                if source.kind() == ErrorKind::UnexpectedEof {
                    Ct2Error::Truncated {
                        path,
                        what: format!("the data of variable `{name}`"),
                    }
                } else {
                    Ct2Error::Read { path, source }
                }
            })
    }

    /// Reads elements `[start, start + count)` of a variable as f32 values.
    fn read_elements(
        &mut self,
        name: &str,
        var: &Variable,
        start: u64,
        count: u64,
    ) -> Result<Vec<f32>, Ct2Error> {
        let size = var.dtype.size();
        let mut out = Vec::with_capacity(count as usize);
        let mut offset = var.offset + start * size as u64;
        let mut left = count as usize * size;
        let mut buf = vec![0u8; CHUNK_BYTES.min(left)];
        while left > 0 {
            let n = CHUNK_BYTES.min(left);
            self.read_at(offset, &mut buf[..n], name)?;
            let chunk = &buf[..n];
            var.dtype.decode(chunk, &mut out);
            offset += n as u64;
            left -= n;
        }
        Ok(out)
    }

    /// Reads rows `[row_start, row_start + row_count)` (along the first
    /// dimension) of a variable as f32, dequantizing int8/int16 weights with
    /// their `<name>_scale` companion (value = quantized / scale).
    pub fn read_rows_f32(
        &mut self,
        name: &str,
        row_start: u64,
        row_count: u64,
    ) -> Result<Vec<f32>, Ct2Error> {
        let var = self.get(name)?.clone();
        let rows = var.rows();
        if row_start
            .checked_add(row_count)
            .is_none_or(|end| end > rows)
        {
            return Err(Ct2Error::Malformed {
                path: self.path.clone(),
                reason: format!(
                    "variable `{name}` has {rows} rows, fewer than {}",
                    row_start.saturating_add(row_count)
                ),
            });
        }
        let row_len = var.row_len();
        let mut values =
            self.read_elements(name, &var, row_start * row_len, row_count * row_len)?;
        if var.dtype.is_float() {
            return Ok(values);
        }
        if var.dtype == DType::I32 || self.find(&format!("{name}_zero")).is_some() {
            return Err(Ct2Error::UnsupportedVariable {
                path: self.path.clone(),
                name: name.to_string(),
                reason: format!(
                    "{} weights{} cannot be converted",
                    var.dtype.name(),
                    if var.dtype == DType::I32 {
                        ""
                    } else {
                        " with zero points"
                    }
                ),
            });
        }
        let scale_name = format!("{name}_scale");
        let scale_var =
            self.find(&scale_name)
                .cloned()
                .ok_or_else(|| Ct2Error::UnsupportedVariable {
                    path: self.path.clone(),
                    name: name.to_string(),
                    reason: format!(
                        "{} weights need a `{scale_name}` variable, which is missing",
                        var.dtype.name()
                    ),
                })?;
        if !scale_var.dtype.is_float() {
            return Err(Ct2Error::UnsupportedVariable {
                path: self.path.clone(),
                name: scale_name,
                reason: format!(
                    "a quantization scale of type {} is not supported",
                    scale_var.dtype.name()
                ),
            });
        }
        if scale_var.shape.is_empty() || scale_var.shape == [1] {
            let s = self.read_elements(&scale_name, &scale_var, 0, 1)?[0];
            values.iter_mut().for_each(|v| *v /= s);
        } else if scale_var.shape == [rows] {
            let scales = self.read_elements(&scale_name, &scale_var, row_start, row_count)?;
            if row_len > 0 {
                for (row, s) in values.chunks_mut(row_len as usize).zip(scales) {
                    row.iter_mut().for_each(|v| *v /= s);
                }
            }
        } else {
            return Err(Ct2Error::BadShape {
                path: self.path.clone(),
                name: scale_name,
                found: scale_var.shape.clone(),
                expected: vec![rows],
            });
        }
        Ok(values)
    }
}
