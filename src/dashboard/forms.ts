/**
 * Form controls for the dashboard: every control has a visible label tied to it, and an error is shown
 * beside its field (aria-invalid + aria-describedby), so forms work by keyboard and screen reader.
 */
import { html, type SafeHtml } from '../web/html.js';

export type FieldErrors = Record<string, string>;

interface FieldBase {
  name: string;
  label: string;
  /** A line under the label saying what is expected. */
  hint?: string;
  required?: boolean;
  errors?: FieldErrors;
}

function describedBy(id: string, hint: string | undefined, error: string | undefined): SafeHtml | string {
  const ids = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return ids ? html` aria-describedby="${ids}"` : '';
}

function frame(id: string, field: FieldBase, control: SafeHtml): SafeHtml {
  const error = field.errors?.[field.name];
  return html`<div class="field${error ? ' invalid' : ''}">
<label for="${id}">${field.label}${field.required ? '' : html` <span class="optional">(optional)</span>`}</label>
${field.hint ? html`<p class="hint" id="${id}-hint">${field.hint}</p>` : ''}
${control}
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
</div>`;
}

export function textField(
  field: FieldBase & {
    value?: string;
    type?: 'text' | 'email' | 'password' | 'url' | 'date' | 'datetime-local' | 'number';
    autocomplete?: string;
    maxLength?: number;
  },
): SafeHtml {
  const id = `field-${field.name}`;
  const error = field.errors?.[field.name];
  return frame(
    id,
    field,
    html`<input id="${id}" name="${field.name}" type="${field.type ?? 'text'}" value="${field.type === 'password' ? '' : (field.value ?? '')}"${
      field.required ? html` required` : ''
    }${field.autocomplete ? html` autocomplete="${field.autocomplete}"` : ''}${field.maxLength ? html` maxlength="${field.maxLength}"` : ''}${
      error ? html` aria-invalid="true"` : ''
    }${describedBy(id, field.hint, error)}>`,
  );
}

/** A file input; its form must be sent as multipart/form-data (web/multipart-form.ts reads it). */
export function fileField(field: FieldBase & { accept: string }): SafeHtml {
  const id = `field-${field.name}`;
  const error = field.errors?.[field.name];
  return frame(
    id,
    field,
    html`<input id="${id}" name="${field.name}" type="file" accept="${field.accept}"${field.required ? html` required` : ''}${
      error ? html` aria-invalid="true"` : ''
    }${describedBy(id, field.hint, error)}>`,
  );
}

export function selectField(field: FieldBase & { value?: string; options: { value: string; label: string }[] }): SafeHtml {
  const id = `field-${field.name}`;
  const error = field.errors?.[field.name];
  return frame(
    id,
    field,
    html`<select id="${id}" name="${field.name}"${error ? html` aria-invalid="true"` : ''}${describedBy(id, field.hint, error)}>
${field.options.map((o) => html`<option value="${o.value}"${o.value === field.value ? html` selected` : ''}>${o.label}</option>`)}
</select>`,
  );
}

export function textArea(field: FieldBase & { value?: string; rows?: number }): SafeHtml {
  const id = `field-${field.name}`;
  const error = field.errors?.[field.name];
  return frame(
    id,
    field,
    html`<textarea id="${id}" name="${field.name}" rows="${field.rows ?? 4}"${error ? html` aria-invalid="true"` : ''}${describedBy(id, field.hint, error)}>${field.value ?? ''}</textarea>`,
  );
}

/**
 * One checkbox that turns a setting on or off, its label beside it: checked, the form sends `value`;
 * unchecked, it sends nothing (so the route reads a missing field as "off").
 */
export function checkboxField(field: FieldBase & { value: string; checked: boolean }): SafeHtml {
  const id = `field-${field.name}`;
  const error = field.errors?.[field.name];
  return html`<div class="field check${error ? ' invalid' : ''}">
<label for="${id}"><input id="${id}" type="checkbox" name="${field.name}" value="${field.value}"${field.checked ? html` checked` : ''}${
    error ? html` aria-invalid="true"` : ''
  }${describedBy(id, field.hint, error)}> ${field.label}</label>
${field.hint ? html`<p class="hint" id="${id}-hint">${field.hint}</p>` : ''}
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
</div>`;
}

/** A form-level error (one not about a single field), announced to screen readers. */
export function formError(message: string | null | undefined): SafeHtml | string {
  return message ? html`<p class="error summary" role="alert">${message}</p>` : '';
}

/**
 * Checkboxes of one name (a set of choices): a fieldset whose legend is the label, the error beside it.
 * Each option may carry a description, read with its box.
 */
export function checkboxGroup(field: FieldBase & { options: { value: string; label: string; description?: string }[]; checked: readonly string[] }): SafeHtml {
  const id = `field-${field.name}`;
  const error = field.errors?.[field.name];
  return html`<fieldset class="field checks${error ? ' invalid' : ''}" id="${id}"${describedBy(id, field.hint, error)}>
<legend>${field.label}</legend>
${field.hint ? html`<p class="hint" id="${id}-hint">${field.hint}</p>` : ''}
${field.options.map(
  (o, i) =>
    html`<label for="${id}-${i}"><input id="${id}-${i}" type="checkbox" name="${field.name}" value="${o.value}"${
      field.checked.includes(o.value) ? html` checked` : ''
    }> <code>${o.label}</code>${o.description ? html` <span class="muted">${o.description}</span>` : ''}</label>`,
)}
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
</fieldset>`;
}

/** What Keyward keeps of a key shown once; a webhook signing secret is kept sealed instead, to sign with. */
const KEPT_DIGEST = 'Keyward keeps only a digest of it.';

/**
 * A secret shown exactly once (a new key): in a read-only field the user can select, with a "Copy"
 * button (dashboard.js) and the warning that it will not be shown again.
 */
export function shownOnce(label: string, secret: string, kept = KEPT_DIGEST): SafeHtml {
  return html`<section class="shown-once" aria-labelledby="shown-once-title">
<h2 id="shown-once-title">${label}</h2>
<p class="warning"><strong>Copy it now: it will not be shown again.</strong> ${kept}</p>
<div class="secret-row"><input id="shown-once-value" class="secret" type="text" readonly value="${secret}" aria-label="${label}">
<button type="button" class="secondary" data-copy="shown-once-value">Copy</button></div>
</section>`;
}
