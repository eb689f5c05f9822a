// The dashboard's only script: "Copy" buttons copy the value of the field they name (data-copy).
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const field = document.getElementById(button.getAttribute('data-copy'));
  if (!field) return;
  field.select();
  const done = () => {
    button.textContent = 'Copied';
    setTimeout(() => (button.textContent = 'Copy'), 2000);
  };
  if (navigator.clipboard) navigator.clipboard.writeText(field.value).then(done, () => document.execCommand('copy') && done());
  else if (document.execCommand('copy')) done();
});

// A form that creates something acts once (its one-time nonce): the server refuses a second
// submission, so a double click would show "already submitted" instead of the new key. Ignoring
// every submit after the first keeps the browser on the answer that shows the key. A form marked
// data-once (a removal) is sent once too: its second submission would find nothing left and say so.
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !(form.querySelector('input[name="once"]') || form.hasAttribute('data-once'))) return;
  if (form.dataset.sent) event.preventDefault();
  form.dataset.sent = 'true';
});
// A page restored from the back/forward cache starts over.
window.addEventListener('pageshow', (event) => {
  if (event.persisted) for (const form of document.querySelectorAll('form[data-sent]')) delete form.dataset.sent;
});
