use promptloom::conversation::{Answers, Conversation, ConversationOptions, Turn};
use promptloom::lower::Provider;
fn main() {
    let mut conv = Conversation::default();
    for i in 0..150 {
        let q = format!("Question {i}: why does compute() return a stale value when the cache is warm, and what would you change?");
        let a = format!("Answer {i}: the cache key omits the version. ").repeat(8);
        conv.append(
            Turn::from_value(serde_json::json!({"role":"user","parts":[{"type":"text","text":q}]}))
                .unwrap(),
            Answers::default(),
        );
        conv.append(
            Turn::from_value(
                serde_json::json!({"role":"assistant","parts":[{"type":"text","text":a}]}),
            )
            .unwrap(),
            Answers::default(),
        );
    }
    let opts = ConversationOptions::new(Provider::OpenAiChat);
    conv.lower_delta(&opts).unwrap();
    let n = 20000;
    let t = std::time::Instant::now();
    let mut total = 0;
    for k in 0..n {
        let q = format!("Question {}: new", 1_000_000 + k);
        conv.append(
            Turn::from_value(serde_json::json!({"role":"user","parts":[{"type":"text","text":q}]}))
                .unwrap(),
            Answers::default(),
        );
        let d = conv.lower_delta(&opts).unwrap();
        total += d.tail.len();
        conv.truncate(300);
    }
    println!(
        "append+delta: {:?}/call ({})",
        t.elapsed() / n,
        total / n as usize
    );
}
