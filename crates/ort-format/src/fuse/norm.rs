//! Mean-centred norms as one `LayerNormalization`.

use super::super::ir::*;
use super::view::{View, arg, both_orders, int, ints, renamed};

/// `Mul(Div(x - mean(x), sqrt(mean((x - mean(x))^2) + eps)), weight)`, both means over the last
/// axis, as `LayerNormalization(x, weight)`.
pub(super) fn layer_norm<'a>(v: &View<'_, '_, 'a>, mul: &Node<'a>) -> Option<Node<'a>> {
    if &*mul.op != b"Mul" || !mul.domain.is_empty() || mul.outputs.len() != 1 {
        return None;
    }
    let means_last_axis = |n: &Node| {
        n.inputs.len() == 1 && ints(n, "axes") == Some(&[-1][..]) && int(n, "keepdims") != Some(0)
    };
    both_orders(mul).into_iter().find_map(|(normed, weight)| {
        let div = v.made_by(normed, "Div")?;
        let [centred, deviation] = div.inputs.as_slice() else {
            return None;
        };
        let sqrt = v.made_by(deviation, "Sqrt")?;
        let add = v.made_by(arg(sqrt, 0)?, "Add")?;
        let (variance, epsilon) = both_orders(add)
            .into_iter()
            .find_map(|(var, eps)| Some((v.made_by(var, "ReduceMean")?, v.scalar(eps)?)))?;
        let pow = v.made_by(arg(variance, 0)?, "Pow")?;
        let sub = v.made_by(centred, "Sub")?;
        let [x, mean] = sub.inputs.as_slice() else {
            return None;
        };
        let mean = v.made_by(mean, "ReduceMean")?;
        let matches = means_last_axis(variance)
            && means_last_axis(mean)
            && pow.inputs.len() == 2
            && pow.inputs[0] == *centred
            && v.scalar(&pow.inputs[1]) == Some(2.0)
            && mean.inputs[0] == *x
            && v.known(weight).is_some_and(|w| w.dims.len() == 1)
            && epsilon > 0.0;
        matches.then(|| {
            node(
                renamed(mul, ".verbatim_layer_norm"),
                "LayerNormalization",
                "",
                vec![x.clone(), weight.clone()],
                mul.outputs[0].clone(),
                vec![
                    ("axis", Value::Int(-1)),
                    ("epsilon", Value::Float(epsilon as f32)),
                ],
            )
        })
    })
}
