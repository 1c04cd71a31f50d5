UNWIND $rows AS row
MATCH (n) WHERE id(n) = row.id
SET n += row.props
WITH n, properties(n) AS searched
WITH n, reduce(w = '', w_s IN [k IN [k IN keys(searched) WHERE k STARTS WITH '_f_'] | reduce(v = '', v_s IN [x IN searched[k] | '\t' + coalesce(x, '')] | v + v_s)] | w + w_s) AS searched_text
SET n._search = searched_text, n._grams = [size_ IN [size(searched_text)] | reduce(h = '', h_s IN [c_ IN [j_ IN range(0, size_ - 3, 62) | substring(searched_text, j_, CASE WHEN size_ - j_ < 64 THEN size_ - j_ ELSE 64 END)] | [x_ IN [replace(replace(replace(replace(replace(replace(c_, ' ', 'ᐁ'), '-', 'ᐂ'), '.', 'ᐃ'), '\'', 'ᐄ'), '_', 'ᐅ'), '/', 'ᐆ')] | reduce(g = '', g_s IN [i_ IN range(0, size(x_) - 3) | ' ' + substring(x_, i_, 3)] | g + g_s)][0]] | h + h_s)][0]
