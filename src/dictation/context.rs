//! The application dictation inserts into, and the workflow chosen for it.

use crate::store::workflows::Workflow;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppContext {
    pub app_name: Option<String>,
    pub app_id: Option<String>,
    pub url: Option<String>,
}

pub trait AppContextSource: Send + Sync {
    fn current(&self) -> AppContext;
}

pub struct StaticContext(pub AppContext);

impl AppContextSource for StaticContext {
    fn current(&self) -> AppContext {
        self.0.clone()
    }
}

pub fn detect() -> Box<dyn AppContextSource> {
    Box::new(StaticContext(AppContext::default()))
}

pub fn matching_workflow<'a>(workflows: &'a [Workflow], ctx: &AppContext) -> Option<&'a Workflow> {
    workflows.iter().find(|w| {
        w.enabled
            && ctx.app_id.as_ref().is_some_and(|id| {
                w.bundle_identifiers
                    .iter()
                    .any(|b| b.eq_ignore_ascii_case(id))
            })
    })
}
