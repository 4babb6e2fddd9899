// The words of generation, in both languages: loaded with views/generation.js, so a blog whose
// widgets do not write does not download them. Text only (textContent or canvas).

export const GENERATE = {
  en: {
    "gen.run": "Generate",
    "gen.stop": "Stop",
    "gen.again": "Generate again",
    "gen.writing": "Writing…",
    "gen.tap": "Tap Generate: the model writes from the text, one token at a time.",
    "gen.widget": "Where layer {layer}, head {head} looked as each token was written: a row per token, over the text before it",
    "gen.widgetCross": "Where layer {layer}, head {head} of cross-attention looked in the source as each token was written: a row per token",
    "gen.done": "{n} tokens: “{text}”",
    "gen.ended.end_token": "The model ended it with its end token.",
    "gen.ended.max_new_tokens": "It stopped at the number of new tokens asked for.",
    "gen.ended.positions": "It stopped where the model's {max} positions ran out.",
    "gen.ended.stopped": "Stopped.",
  },
  ko: {
    "gen.run": "생성",
    "gen.stop": "멈춤",
    "gen.again": "다시 생성",
    "gen.writing": "쓰는 중…",
    "gen.tap": "생성을 누르세요: 모델이 이 글에서 시작해 토큰을 하나씩 씁니다.",
    "gen.widget": "토큰을 하나씩 쓸 때 {layer}층 {head}번 헤드가 본 곳: 토큰마다 한 줄, 그 앞의 글 위에",
    "gen.widgetCross": "토큰을 하나씩 쓸 때 교차 어텐션 {layer}층 {head}번 헤드가 원문에서 본 곳: 토큰마다 한 줄",
    "gen.done": "토큰 {n}개: “{text}”",
    "gen.ended.end_token": "모델이 끝 토큰을 써서 끝냈습니다.",
    "gen.ended.max_new_tokens": "요청한 새 토큰 수에서 멈췄습니다.",
    "gen.ended.positions": "모델의 위치 {max}개가 다 차서 멈췄습니다.",
    "gen.ended.stopped": "멈췄습니다.",
  },
};
