// A typed value input: a type picker (text, number, true/false, JSON) and the matching control.

import { ConsoleError } from '../api.js';
import { h } from '../dom.js';
import { kindOf } from './values.js';

const TYPES = [
  ['string', 'Text'],
  ['number', 'Number'],
  ['boolean', 'True/false'],
  ['json', 'JSON'],
];

let fieldIds = 0;

/**
 * @param {string} testid prefix of the controls' data-testid (`<testid>-type`, `<testid>-input`)
 * @returns {{element: HTMLElement, value: () => any, set: (value: any) => void, dirty: boolean}}
 */
export function valueField(testid, label = 'Value') {
  const id = `value-field-${++fieldIds}`;
  const type = h('select', { id: `${id}-type`, 'data-testid': `${testid}-type` },
    TYPES.map(([value, text]) => h('option', { value }, text)));
  const text = h('input', { id: `${id}-input`, type: 'text', 'data-testid': `${testid}-input`, autocomplete: 'off', spellcheck: 'false' });
  const json = h('textarea', { id: `${id}-json`, rows: 6, class: 'mono', 'data-testid': `${testid}-json`, spellcheck: 'false' });
  const flag = h('select', { id: `${id}-flag`, 'data-testid': `${testid}-flag` },
    h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
  const inputLabel = h('label', { for: text.id }, label);
  const control = h('div', { class: 'value-control' });
  const field = {
    element: h('div', { class: 'value-field' },
      h('div', { class: 'field field-type' }, h('label', { for: type.id }, 'Type'), type),
      h('div', { class: 'field field-value' }, inputLabel, control)),
    dirty: false,
    value: () => parseTyped(type.value, type.value === 'boolean' ? flag.value : type.value === 'json' ? json.value : text.value),
    set(value) {
      const kind = kindOf(value);
      type.value = kind === 'object' || kind === 'null' ? 'json' : kind;
      if (kind === 'boolean') flag.value = String(value);
      else if (type.value === 'json') json.value = value === null ? '' : JSON.stringify(value, null, 2);
      else text.value = String(value);
      showControl();
      field.dirty = false;
    },
  };
  function showControl() {
    const current = type.value === 'boolean' ? flag : type.value === 'json' ? json : text;
    control.replaceChildren(current);
    inputLabel.htmlFor = current.id;
    text.inputMode = type.value === 'number' ? 'decimal' : 'text';
  }
  type.addEventListener('change', () => { field.dirty = true; showControl(); });
  for (const input of [text, json, flag]) input.addEventListener('input', () => { field.dirty = true; });
  showControl();
  return field;
}

/** The value `text` stands for as `type`, or a ConsoleError in words. */
export function parseTyped(type, text) {
  switch (type) {
    case 'string':
      return text;
    case 'number': {
      const number = Number(text.trim());
      if (text.trim() === '' || !Number.isFinite(number)) throw new ConsoleError(`"${text}" is not a number.`);
      return number;
    }
    case 'boolean':
      return text === 'true';
    default:
      try {
        return JSON.parse(text);
      } catch (error) {
        throw new ConsoleError(`That is not valid JSON: ${error.message}`);
      }
  }
}
