MATCH (q:WriteGateQuarantine) WHERE q.id = $id
SET q.error_code = $error_code, q.message = $message, q.replayed_at = $at,
    q.replays = coalesce(q.replays, 0) + 1, q.tried_at = (timestamp() / 1000)
RETURN q.id AS id
