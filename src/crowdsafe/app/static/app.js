/* crowdsafe app: a form marked data-busy="…" is sent once. On submit its buttons are disabled and
   say what is happening (publishing, reading a large file), and a second submit is dropped. The
   pages work without this script: the server starts one release per plan form whatever is sent. */
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (event.defaultPrevented || !(form instanceof HTMLFormElement) || !form.hasAttribute("data-busy")) {
    return;
  }
  if (form.hasAttribute("data-sent")) {
    event.preventDefault();
    return;
  }
  form.setAttribute("data-sent", "");
  form.setAttribute("aria-busy", "true");
  // after this turn: the form's fields (and the button pressed) are already taken for the request
  window.setTimeout(function () {
    form.querySelectorAll("button").forEach(function (button) {
      button.setAttribute("data-label", button.textContent);
      button.textContent = form.getAttribute("data-busy");
      button.disabled = true;
    });
  }, 0);
});
/* Back to a page the browser kept (back/forward cache): its forms work again. */
window.addEventListener("pageshow", function () {
  document.querySelectorAll("form[data-sent]").forEach(function (form) {
    form.removeAttribute("data-sent");
    form.removeAttribute("aria-busy");
    form.querySelectorAll("button[data-label]").forEach(function (button) {
      button.textContent = button.getAttribute("data-label");
      button.removeAttribute("data-label");
      button.disabled = false;
    });
  });
});
