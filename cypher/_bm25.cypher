// BM25 (k1 1.2, b 0.75) over the rows (x, text, total) coming in, where text is an
// item's words as cypher.Words gives them, each with a space on both sides, and total
// is how many items the visible set holds. Term statistics come from the visible set
// alone: total its size, and each term's document frequency and the average length
// over the visible items holding one of the words (the exact plans read every visible
// item, the index plans every visible hit of the words: the same items, so both plans
// give the same scores), so no score and no ranking depends on text the requester
// cannot see. Leaves the best $limit rows (x, score), best first.
WITH x, total, toFloat(size(text)) AS len,
     [t IN $words.terms | (size(text) - size(replace(text, ' ' + t + ' ', ''))) / (size(t) + 2)] AS tf
WHERE any(f IN tf WHERE f > 0)
WITH collect({x: x, len: len, tf: tf}) AS docs, avg(len) AS avglen, toFloat(total) AS n
WITH docs, avglen, n, [i IN range(0, size($words.terms) - 1) | toFloat(size([d IN docs WHERE d.tf[i] > 0]))] AS df
UNWIND docs AS d
WITH d.x AS x, reduce(s = 0.0, i IN range(0, size($words.terms) - 1) | s + CASE d.tf[i] WHEN 0 THEN 0.0
  ELSE log(1 + (n - df[i] + 0.5) / (df[i] + 0.5)) * d.tf[i] * 2.2 / (d.tf[i] + 1.2 * (0.25 + 0.75 * d.len / avglen)) END) AS score
WHERE score > 0
WITH x, score ORDER BY score DESC LIMIT $limit
