"""The lexical scorer's table of chunks (test_lexical.py), English and Chinese; text_snapshot.py analyses them too."""

EN = ["Returns are accepted within 30 days of delivery for unused items.",
      "The warranty covers manufacturing defects for 1 year. Express shipping costs $12.99."]
ZH = ["退货需要在三十天内完成，商品需未使用。", "保修期为一年，仅限制造缺陷。"]
