//! Minimal FlatBuffers access: a bounds-checked reader of tables, fields, strings and vectors.
//!
//! Every read checks its position and length against the buffer and returns [`FormatError`] instead of
//! panicking. Vector reads are charged to a budget proportional to the buffer size, so a damaged file
//! whose tables share one huge vector cannot make a caller collect more elements than a real file has.

use super::FormatError;
use std::cell::Cell;

pub type Result<T> = std::result::Result<T, FormatError>;

/// A vector in the buffer: `pos` is the position of its u32 length word, elements start at `pos + 4`.
#[derive(Clone, Copy, Debug)]
pub struct Vector {
    pub pos: usize,
    pub len: usize,
    pub elem: usize,
}

impl Vector {
    /// Position of element `i`.
    pub fn at(&self, i: usize) -> usize {
        self.pos + 4 + self.elem * i
    }
}

/// Checked, read-only view of a flatbuffer.
pub struct Reader<'a> {
    buf: &'a [u8],
    budget: Cell<usize>,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        // A real file stores each collected vector once, with elements of at least 4 bytes.
        Self::with_budget(buf, buf.len() / 4 + 1024)
    }

    /// A reader that may visit at most `budget` vector elements in all.
    pub fn with_budget(buf: &'a [u8], budget: usize) -> Self {
        Reader {
            buf,
            budget: Cell::new(budget),
        }
    }

    pub fn bytes(&self, pos: usize, n: usize) -> Result<&'a [u8]> {
        pos.checked_add(n)
            .and_then(|end| self.buf.get(pos..end))
            .ok_or(FormatError::OutOfBounds { at: pos })
    }

    fn array<const N: usize>(&self, pos: usize) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(pos, N)?);
        Ok(a)
    }

    pub fn u16(&self, pos: usize) -> Result<u16> {
        self.array(pos).map(u16::from_le_bytes)
    }
    pub fn u32(&self, pos: usize) -> Result<u32> {
        self.array(pos).map(u32::from_le_bytes)
    }
    pub fn i32(&self, pos: usize) -> Result<i32> {
        self.array(pos).map(i32::from_le_bytes)
    }
    pub fn i64(&self, pos: usize) -> Result<i64> {
        self.array(pos).map(i64::from_le_bytes)
    }
    pub fn i8(&self, pos: usize) -> Result<i8> {
        self.array(pos).map(i8::from_le_bytes)
    }

    /// Follow the uoffset stored at `pos`.
    pub fn deref(&self, pos: usize) -> Result<usize> {
        let target = pos
            .checked_add(self.u32(pos)? as usize)
            .filter(|&t| t < self.buf.len())
            .ok_or(FormatError::OutOfBounds { at: pos })?;
        Ok(target)
    }

    /// Position of field `slot` (0-based) of the table at `t`, or `None` when the field is absent.
    pub fn field(&self, t: usize, slot: usize) -> Result<Option<usize>> {
        let vt = (t as i64)
            .checked_sub(self.i32(t)? as i64)
            .filter(|&v| v >= 0)
            .ok_or(FormatError::OutOfBounds { at: t })? as usize;
        let vt_len = self.u16(vt)? as usize;
        let o = 4 + 2 * slot;
        if o + 2 > vt_len {
            return Ok(None);
        }
        match self.u16(vt + o)? {
            0 => Ok(None),
            fo => Ok(Some(t + fo as usize)),
        }
    }

    /// The table (or string / vector) that field `slot` of table `t` points to.
    pub fn table(&self, t: usize, slot: usize) -> Result<Option<usize>> {
        self.field(t, slot)?.map(|p| self.deref(p)).transpose()
    }

    fn string_at(&self, s: usize) -> Result<&'a [u8]> {
        let n = self.u32(s)? as usize;
        self.bytes(s + 4, n)
    }

    pub fn string(&self, t: usize, slot: usize) -> Result<Option<&'a [u8]>> {
        self.table(t, slot)?.map(|s| self.string_at(s)).transpose()
    }

    /// Vector field with `elem`-byte elements; its whole extent is checked against the buffer.
    pub fn vector(&self, t: usize, slot: usize, elem: usize) -> Result<Option<Vector>> {
        let Some(pos) = self.table(t, slot)? else {
            return Ok(None);
        };
        let len = self.u32(pos)? as usize;
        let bytes = len
            .checked_mul(elem)
            .ok_or(FormatError::OutOfBounds { at: pos })?;
        self.bytes(pos + 4, bytes)?;
        Ok(Some(Vector { pos, len, elem }))
    }

    fn charge(&self, n: usize) -> Result<()> {
        let left = self
            .budget
            .get()
            .checked_sub(n)
            .ok_or(FormatError::Malformed("too many vector elements"))?;
        self.budget.set(left);
        Ok(())
    }

    /// Like [`Reader::vector`], for a vector whose elements the caller will visit one by one: its
    /// length is charged to the budget.
    pub fn counted_vector(&self, t: usize, slot: usize, elem: usize) -> Result<Option<Vector>> {
        let v = self.vector(t, slot, elem)?;
        if let Some(v) = v {
            self.charge(v.len)?;
        }
        Ok(v)
    }

    /// Elements of a vector of tables (empty when absent).
    pub fn tables(&self, t: usize, slot: usize) -> Result<Vec<usize>> {
        let Some(v) = self.counted_vector(t, slot, 4)? else {
            return Ok(Vec::new());
        };
        (0..v.len).map(|i| self.deref(v.at(i))).collect()
    }

    /// Elements of a vector of strings (empty when absent).
    pub fn strings(&self, t: usize, slot: usize) -> Result<Vec<&'a [u8]>> {
        self.tables(t, slot)?
            .into_iter()
            .map(|s| self.string_at(s))
            .collect()
    }

    /// A vector of i64 (`None` when absent).
    pub fn i64s(&self, t: usize, slot: usize) -> Result<Option<Vec<i64>>> {
        let Some(v) = self.counted_vector(t, slot, 8)? else {
            return Ok(None);
        };
        (0..v.len)
            .map(|i| self.i64(v.at(i)))
            .collect::<Result<_>>()
            .map(Some)
    }

    /// Scalar field readers with the schema default used when the field is absent.
    pub fn field_u32(&self, t: usize, slot: usize, default: u32) -> Result<u32> {
        self.field(t, slot)?.map_or(Ok(default), |p| self.u32(p))
    }
    pub fn field_i32(&self, t: usize, slot: usize, default: i32) -> Result<i32> {
        self.field(t, slot)?.map_or(Ok(default), |p| self.i32(p))
    }
    pub fn field_i64(&self, t: usize, slot: usize, default: i64) -> Result<i64> {
        self.field(t, slot)?.map_or(Ok(default), |p| self.i64(p))
    }
    pub fn field_u8(&self, t: usize, slot: usize, default: u8) -> Result<u8> {
        self.field(t, slot)?
            .map_or(Ok(default), |p| self.bytes(p, 1).map(|b| b[0]))
    }
    pub fn field_f32(&self, t: usize, slot: usize, default: f32) -> Result<f32> {
        self.field(t, slot)?
            .map_or(Ok(default), |p| self.u32(p).map(f32::from_bits))
    }

    /// A vector of f32 (empty when absent).
    pub fn f32s(&self, t: usize, slot: usize) -> Result<Vec<f32>> {
        let Some(v) = self.counted_vector(t, slot, 4)? else {
            return Ok(Vec::new());
        };
        (0..v.len)
            .map(|i| self.u32(v.at(i)).map(f32::from_bits))
            .collect()
    }

    /// The bytes of a vector of `u8`, `i8` or any raw data (`None` when absent).
    pub fn raw(&self, t: usize, slot: usize) -> Result<Option<&'a [u8]>> {
        self.vector(t, slot, 1)?
            .map(|v| self.bytes(v.pos + 4, v.len))
            .transpose()
    }

    pub fn field_i8(&self, t: usize, slot: usize, default: i8) -> Result<i8> {
        self.field(t, slot)?.map_or(Ok(default), |p| self.i8(p))
    }
}
