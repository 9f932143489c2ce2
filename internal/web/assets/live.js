// Follows the run shown: when its journal moves on, the page's main part
// is fetched again and put in place, and following starts over from there.
(function () {
  "use strict";
  var follow = function () {
    var main = document.getElementById("live");
    if (!main || !window.EventSource) { return; }
    var es = new EventSource("/runs/" + encodeURIComponent(main.dataset.run) + "/events?after=" + main.dataset.seq);
    es.addEventListener("change", function () {
      es.close();
      // The header keeps a form's result line for the page the form leads to.
      fetch(location.pathname, { credentials: "same-origin", headers: { "X-Gonogo-Follow": "1" } })
        .then(function (res) { return res.text(); })
        .then(function (html) {
          var next = new DOMParser().parseFromString(html, "text/html").getElementById("live");
          if (next) {
            // The answer to the person's last form stays until they leave the page.
            var said = main.querySelector(".said"), header = next.querySelector("dl.header");
            if (said && header && !next.querySelector(".said")) { header.after(said); }
            main.replaceWith(next);
          }
          follow();
        });
    });
  };
  follow();
})();
