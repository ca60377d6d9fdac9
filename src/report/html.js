// Filters rows and cases by verdict and level; opens a case a link points at.
(function () {
  var verdict = document.getElementById("filter-verdict");
  var level = document.getElementById("filter-level");
  function apply() {
    var v = verdict ? verdict.value : "", l = level ? level.value : "";
    document.querySelectorAll(".filterable").forEach(function (el) {
      var show = (!v || el.dataset.verdict === v) && (!l || el.dataset.level === l);
      el.classList.toggle("hidden", !show);
    });
  }
  if (verdict) verdict.addEventListener("change", apply);
  if (level) level.addEventListener("change", apply);
  function openProblems() {
    document.querySelectorAll("details.case").forEach(function (d) {
      var v = d.dataset.verdict;
      d.open = v === "fail" || v === "error" || v === "warn";
    });
  }
  // #failing opens every failing case; #verdict=V shows only rows and cases of verdict V;
  // #case-ID opens that case, and an anchor inside a case (a frame) opens it and shows it.
  function openTarget() {
    var id;
    try { id = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    if (id === "failing") return openProblems();
    if (id.indexOf("verdict=") === 0 && verdict) {
      verdict.value = id.slice(8);
      return apply();
    }
    var el = id && document.getElementById(id);
    if (!el) return;
    var d = el.tagName === "DETAILS" ? el : el.closest("details");
    if (d) d.open = true;
    if (el !== d) el.scrollIntoView({ block: "center", inline: "start" });
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  var problems = document.getElementById("open-problems");
  if (problems) problems.addEventListener("click", openProblems);
  var close = document.getElementById("close-all");
  if (close) close.addEventListener("click", function () {
    document.querySelectorAll("details.case").forEach(function (d) { d.open = false; });
  });
})();
