//! The selected model: chosen, of an engine this build has, in the catalog, and installed and
//! loadable as its engine's row of the registry checks it (without loading it).

use super::Finding;
use crate::engine::catalog::find_model;
use crate::engine::models::ModelDir;
use crate::engine::registry;

const NAME: &str = "model";

pub fn model(models: &ModelDir, engine: &str, model: &str) -> Finding {
    let install =
        |id: &str| format!("verbatim models download {id} && verbatim models select {id}");
    // A first model to download: small, English, quick to fetch.
    let default_model = "tiny.en";
    if model.is_empty() {
        return Finding::fail(NAME, "no model is selected", install(default_model));
    }
    if !engine.is_empty() && registry::kind(engine).is_none() {
        return Finding::fail(
            NAME,
            format!(
                "the selected engine '{engine}' is not one this build has (it has: {})",
                registry::ids()
            ),
            install(default_model),
        );
    }
    let Some(spec) = find_model(model).filter(|spec| engine.is_empty() || spec.engine == engine)
    else {
        return Finding::fail(
            NAME,
            format!("the selected model '{model}' is not in the catalog"),
            install(default_model),
        );
    };
    let kind = registry::kind(spec.engine).expect("a model of the catalog has its engine's row");
    match (kind.check)(models, spec) {
        Ok(detail) => Finding::ok(NAME, detail),
        Err(problem) => Finding::fail(NAME, problem.detail, problem.fix),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    #[test]
    fn nothing_selected_or_not_installed_fails_with_the_command_to_run() {
        let tmp = tempfile::tempdir().unwrap();
        let models = ModelDir::new(tmp.path());
        let none = model(&models, "", "");
        assert_eq!(none.status, Status::Fail);
        assert!(
            none.fix
                .unwrap()
                .contains("verbatim models download tiny.en")
        );
        if cfg!(feature = "whisper") {
            let missing = model(&models, "whisper", "base");
            assert_eq!(missing.status, Status::Fail);
            assert_eq!(missing.fix.unwrap(), "verbatim models download base");
        }
        let elsewhere = model(&models, "bogus", "base");
        assert_eq!(elsewhere.status, Status::Fail);
        assert!(elsewhere.detail.contains("not one this build has"));
        let unknown = model(&models, "", "moonshine-huge");
        assert!(unknown.detail.contains("not in the catalog"), "{unknown:?}");
    }
}
