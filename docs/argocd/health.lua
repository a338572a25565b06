-- Argo CD health check for LLMKube's InferenceService, ModelRouter and Model
-- (docs/health.md, promise K11). It reads what kstatus reads, in the same order:
-- observedGeneration, then Stalled, then Reconciling, then Ready.
local hs = { status = "Progressing", message = "waiting for the operator's first status" }
if obj.status == nil then
  return hs
end
local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if observed == nil or (generation ~= nil and observed < generation) then
  hs.message = "waiting for the operator to realize generation " .. tostring(generation)
  return hs
end
local conditions = {}
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    conditions[c.type] = c
  end
end
local function said(c)
  return (c.reason or "") .. ": " .. (c.message or "")
end
local stalled = conditions["Stalled"]
if stalled ~= nil and stalled.status == "True" then
  return { status = "Degraded", message = said(stalled) }
end
local reconciling = conditions["Reconciling"]
if reconciling ~= nil and reconciling.status == "True" then
  return { status = "Progressing", message = said(reconciling) }
end
local ready = conditions["Ready"]
if ready == nil then
  return hs
end
if ready.status == "True" then
  return { status = "Healthy", message = said(ready) }
end
-- A Model that no InferenceService names is not broken: nothing is meant to load it (operators
-- before Ready=True/NotInUse wrote Ready=False/NotInUse).
if ready.reason == "NotInUse" then
  return { status = "Healthy", message = said(ready) }
end
return { status = "Degraded", message = said(ready) }
