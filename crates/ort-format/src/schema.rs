//! The slice of ONNX Runtime's ORT-format schema (onnxruntime/core/flatbuffers/schema/ort.fbs)
//! that the conversion reads: field slots (0-based field ids) per table, and enum values.

pub const SESSION_MODEL: usize = 1;

pub const MODEL_IR_VERSION: usize = 0;
pub const MODEL_OPSET_IMPORT: usize = 1;
pub const MODEL_PRODUCER_NAME: usize = 2;
pub const MODEL_GRAPH: usize = 7;

pub const OPSET_DOMAIN: usize = 0;
pub const OPSET_VERSION: usize = 1;

pub const GRAPH_INITIALIZERS: usize = 0;
pub const GRAPH_NODE_ARGS: usize = 1;
pub const GRAPH_NODES: usize = 2;
pub const GRAPH_INPUTS: usize = 5;
pub const GRAPH_OUTPUTS: usize = 6;
pub const GRAPH_SPARSE_INITIALIZERS: usize = 7;

pub const NODE_NAME: usize = 0;
pub const NODE_DOMAIN: usize = 2;
pub const NODE_INDEX: usize = 4;
pub const NODE_OP_TYPE: usize = 5;
pub const NODE_INPUTS: usize = 8;
pub const NODE_OUTPUTS: usize = 9;
pub const NODE_ATTRIBUTES: usize = 10;

pub const ATTR_NAME: usize = 0;
pub const ATTR_TYPE: usize = 2;
pub const ATTR_F: usize = 3;
pub const ATTR_I: usize = 4;
pub const ATTR_S: usize = 5;
pub const ATTR_T: usize = 6;
pub const ATTR_G: usize = 7;
pub const ATTR_FLOATS: usize = 8;
pub const ATTR_INTS: usize = 9;
pub const ATTR_STRINGS: usize = 10;

pub const TENSOR_NAME: usize = 0;
pub const TENSOR_DIMS: usize = 2;
pub const TENSOR_DATA_TYPE: usize = 3;
pub const TENSOR_RAW_DATA: usize = 4;
pub const TENSOR_STRING_DATA: usize = 5;
pub const TENSOR_EXTERNAL_DATA_OFFSET: usize = 6;

pub const VALUE_INFO_NAME: usize = 0;
pub const VALUE_INFO_TYPE: usize = 2;
pub const TYPE_INFO_VALUE_TYPE: usize = 1;
pub const TYPE_INFO_VALUE: usize = 2;
pub const TENSOR_TYPE_ELEM_TYPE: usize = 0;
pub const TENSOR_TYPE_SHAPE: usize = 1;
pub const SHAPE_DIMS: usize = 0;
pub const DIMENSION_VALUE: usize = 0;
pub const DIM_VALUE_TYPE: usize = 0;
pub const DIM_VALUE_VALUE: usize = 1;
pub const DIM_VALUE_PARAM: usize = 2;

// Attribute types, the same numbers in ONNX's AttributeProto.
pub const ATTR_TYPE_FLOAT: i32 = 1;
pub const ATTR_TYPE_INT: i32 = 2;
pub const ATTR_TYPE_STRING: i32 = 3;
pub const ATTR_TYPE_TENSOR: i32 = 4;
pub const ATTR_TYPE_GRAPH: i32 = 5;
pub const ATTR_TYPE_FLOATS: i32 = 6;
pub const ATTR_TYPE_INTS: i32 = 7;
pub const ATTR_TYPE_STRINGS: i32 = 8;

// Tensor element types, the same numbers in ONNX's TensorProto.
pub const FLOAT: i32 = 1;
pub const INT8: i32 = 3;
pub const INT64: i32 = 7;

pub const TYPE_INFO_TENSOR: u8 = 1;
pub const DIM_TYPE_VALUE: i8 = 1;
pub const DIM_TYPE_PARAM: i8 = 2;
