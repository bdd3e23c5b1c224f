-- load.lua: the request mix of scripts/load.sh for wrk (one Lua state per
-- wrk thread). Each request is, at random:
--
--   25%  a first page of /api/v1/bookings (no filter, order=created_desc,
--        status=..., or both)
--   30%  a follow-up: a nextCursor kept from an earlier response of this
--        thread, replayed URL-escaped with the filters it was issued for
--        (a first page while the thread has none, and always on the bare
--        server, which returns everything at once)
--   15%  a drill-down: /api/v1/bookings/{id}, half of them with ?fields=all
--   15%  a log chunk: the first one of /api/v1/logs/app (follow-ups come from
--        the cursors above)
--   15%  a bad cursor: garbage, a truncated or a tampered real one (the
--        wrapped server must answer 400; the bare one ignores the parameter)
--
-- response() counts statuses per class; done() prints one line that load.sh
-- parses:
--   LOADRESULT requests=N duration_s=S rps=R p50_ms=.. p90_ms=.. p99_ms=..
--              s2xx=.. s4xx=.. s5xx=.. other=.. followups=.. stale=.. mismatch=..
--              sock_errors=..
-- (stale: 400 cursor_stale, a follow-up whose snapshot the bounded store
-- evicted; mismatch: 400 cursor_mismatch, which includes tampered cursors)

local statuses = { "confirmed", "pending", "cancelled", "checked_in", "completed" }
local maxCursors = 64

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  s2xx, s4xx, s5xx, other, followups, stale, mismatch = 0, 0, 0, 0, 0, 0, 0
  cursors = {} -- entries: { base = "/api/v1/...?" (filters and a trailing & or ?), cursor = "..." }
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
end

local function escape(s)
  return (s:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", c:byte()) end))
end

local function firstPage()
  local v = math.random(4)
  if v == 1 then
    return "/api/v1/bookings"
  elseif v == 2 then
    return "/api/v1/bookings?order=created_desc"
  elseif v == 3 then
    return "/api/v1/bookings?status=" .. statuses[math.random(#statuses)]
  end
  return "/api/v1/bookings?status=" .. statuses[math.random(#statuses)] .. "&order=created_desc"
end

local function someCursor()
  if #cursors > 0 then
    return cursors[math.random(#cursors)].cursor
  end
  return "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
end

local function badCursor()
  local v = math.random(3)
  local c = someCursor()
  if v == 1 then
    c = "not-a-cursor-" .. math.random(1000000)
  elseif v == 2 then
    c = c:sub(1, math.floor(#c / 2))
  else -- flip one character in the middle
    local i = math.floor(#c / 2)
    local ch = c:sub(i, i) == "A" and "B" or "A"
    c = c:sub(1, i - 1) .. ch .. c:sub(i + 1)
  end
  return "/api/v1/bookings?cursor=" .. escape(c)
end

function request()
  local r = math.random(100)
  local path
  if r <= 25 then
    path = firstPage()
  elseif r <= 55 then
    if #cursors > 0 then
      local e = cursors[math.random(#cursors)]
      path = e.base .. "cursor=" .. escape(e.cursor)
      followups = followups + 1
    else
      path = firstPage()
    end
  elseif r <= 70 then
    path = string.format("/api/v1/bookings/BK%05d", math.random(500))
    if math.random(2) == 1 then
      path = path .. "?fields=all"
    end
  elseif r <= 85 then
    path = "/api/v1/logs/app"
  else
    path = badCursor()
  end
  return wrk.format("GET", path)
end

-- keep remembers the nextCursor of a wrapped response with the path and
-- filters it belongs to. wrk does not say which request a response answers,
-- so they are read back from the body: a log chunk has "content"; a bookings
-- page with fewer than 500 in totalCount was filtered by the status of its
-- items, and its order shows in its first two ids.
local function keep(body)
  local c = body:match('"nextCursor":"([^"]+)"')
  if not c then
    return
  end
  local base
  if body:sub(1, 11) == '{"content":' then
    base = "/api/v1/logs/app?"
  elseif body:sub(1, 9) == '{"items":' then
    local q = {}
    local total = tonumber(body:match('"totalCount":(%d+)'))
    if total and total < 500 then
      local st = body:match('"status":"([%w_]+)"')
      if st then
        table.insert(q, "status=" .. st)
      end
    end
    local a, b = body:match('"id":"BK(%d+)".-"id":"BK(%d+)"')
    if a and b and tonumber(a) > tonumber(b) then
      table.insert(q, "order=created_desc")
    end
    base = "/api/v1/bookings?"
    if #q > 0 then
      base = base .. table.concat(q, "&") .. "&"
    end
  else
    return
  end
  local e = { base = base, cursor = c }
  if #cursors < maxCursors then
    table.insert(cursors, e)
  else
    cursors[math.random(maxCursors)] = e
  end
end

function response(status, headers, body)
  if status >= 500 then
    s5xx = s5xx + 1
  elseif status >= 400 then
    s4xx = s4xx + 1
    if body then
      local code = body:match('"code":"([%w_]+)"')
      if code == "cursor_stale" then
        stale = stale + 1
      elseif code == "cursor_mismatch" then
        mismatch = mismatch + 1
      end
    end
  elseif status >= 200 and status < 300 then
    s2xx = s2xx + 1
    -- Only wrapped responses carry cursors (and this header): the bare
    -- server's bodies (up to ~1 MB) are not scanned.
    if headers["Ctxfit-Strategy"] and body then
      keep(body)
    end
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local t2, t4, t5, to, tf, ts, tm = 0, 0, 0, 0, 0, 0, 0
  for _, t in ipairs(threads) do
    t2 = t2 + (t:get("s2xx") or 0)
    t4 = t4 + (t:get("s4xx") or 0)
    t5 = t5 + (t:get("s5xx") or 0)
    to = to + (t:get("other") or 0)
    tf = tf + (t:get("followups") or 0)
    ts = ts + (t:get("stale") or 0)
    tm = tm + (t:get("mismatch") or 0)
  end
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    "LOADRESULT requests=%d duration_s=%.2f rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f s2xx=%d s4xx=%d s5xx=%d other=%d followups=%d stale=%d mismatch=%d sock_errors=%d\n",
    summary.requests, secs, summary.requests / secs,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    t2, t4, t5, to, tf, ts, tm, e.connect + e.read + e.write + e.timeout))
end
