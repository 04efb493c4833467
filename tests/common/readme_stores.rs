use promptloom::compositor::{CommandCatalog, Step, SubmitOptions};
use promptloom::store::{AsyncBackend, AsyncMessageStore};
use promptloom::UserMessage;

/// Persists what the user sent in the session "chat", reads it back, and counts the
/// session's messages.
async fn remember<B: AsyncBackend>(store: &AsyncMessageStore<B>) -> promptloom::Result<usize> {
    let message =
        UserMessage::from_json(r#"{"role":"user","parts":[{"type":"text","text":"hi"}]}"#)?;
    let options = SubmitOptions {
        session: "chat".into(),
        now: Some(1_700_000_000_000),
        ..SubmitOptions::default()
    };
    match store.submit(&message, &CommandCatalog::default(), &options, None).await? {
        Step::Done(sub) => assert_eq!(store.get(&sub.id).await?, sub.message),
        _ => unreachable!("plain text asks the host nothing"),
    }
    Ok(store.history("chat").await?.len())
}
