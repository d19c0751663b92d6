/**
 * Renders a form from a form model (docs/models.md#other-model-types: a `form` model's body is any
 * JSON) and from a process model's `input` JSON Schema. Two shapes are understood:
 * - `{ fields: [{ key, type, label?, required?, options? }] }`, as examples/leave-form.json;
 * - a JSON Schema object (`{ type: 'object', properties, required }`, or one under `schema`), with the
 *   types the examples use: string (with `enum`, `format: date`, `maxLength`), number, integer (with
 *   `minimum`, `maximum`), boolean.
 * Anything else is shown as a JSON editor of the whole data, so no form model leaves a task unworkable.
 */
import { useId } from 'preact/hooks'

export type FieldType = 'text' | 'textarea' | 'number' | 'integer' | 'boolean' | 'date' | 'select'

export interface FormField {
  key: string
  type: FieldType
  label: string
  required: boolean
  options?: string[]
  minimum?: number
  maximum?: number
  maxLength?: number
}

type Json = Record<string, unknown>

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The fields of a form model or JSON Schema; undefined when it is neither shape. */
export function fieldsOf(model: unknown): FormField[] | undefined {
  if (!isObject(model)) return undefined
  if (Array.isArray(model.fields)) return model.fields.filter(isObject).map(fieldFromList)
  const schema = isObject(model.schema) ? model.schema : model
  if (isObject(schema.properties)) {
    const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : []
    return Object.entries(schema.properties)
      .filter((entry): entry is [string, Json] => isObject(entry[1]))
      .map(([key, property]) => fieldFromSchema(key, property, required.includes(key)))
  }
  return undefined
}

function fieldFromList(field: Json): FormField {
  const key = String(field.key ?? field.name ?? '')
  const declared = String(field.type ?? 'text')
  const options = Array.isArray(field.options) ? field.options.map(String) : undefined
  const type: FieldType = options
    ? 'select'
    : ((['textarea', 'number', 'integer', 'boolean', 'date'] as const).find((known) => known === declared) ??
      (declared === 'checkbox' ? 'boolean' : 'text'))
  return {
    key,
    type,
    label: typeof field.label === 'string' ? field.label : key,
    required: field.required === true,
    ...(options ? { options } : {}),
  }
}

function fieldFromSchema(key: string, property: Json, required: boolean): FormField {
  const label = typeof property.title === 'string' ? property.title : key
  const number = (name: string): number | undefined => (typeof property[name] === 'number' ? (property[name] as number) : undefined)
  const limits = {
    ...(number('minimum') === undefined ? {} : { minimum: number('minimum') }),
    ...(number('maximum') === undefined ? {} : { maximum: number('maximum') }),
    ...(number('maxLength') === undefined ? {} : { maxLength: number('maxLength') }),
  }
  if (Array.isArray(property.enum)) return { key, label, required, type: 'select', options: property.enum.map(String) }
  switch (property.type) {
    case 'number':
    case 'integer':
      return { key, label, required, type: property.type, ...limits }
    case 'boolean':
      return { key, label, required, type: 'boolean' }
    default: {
      const type: FieldType = property.format === 'date' ? 'date' : (number('maxLength') ?? 0) > 200 ? 'textarea' : 'text'
      return { key, label, required, type, ...limits }
    }
  }
}

/** The value an input's text stands for, typed as the field says (an empty number is left out). */
function parsed(field: FormField, text: string): unknown {
  if (field.type === 'number' || field.type === 'integer') return text === '' ? undefined : Number(text)
  return text
}

export function FormFields(props: {
  fields: FormField[]
  data: Json
  readOnly: boolean
  onChange: (data: Json) => void
}): preact.JSX.Element {
  const idPrefix = useId()
  const set = (key: string, value: unknown): void => {
    const next = { ...props.data }
    if (value === undefined) delete next[key]
    else next[key] = value
    props.onChange(next)
  }
  return (
    <div>
      {props.fields.map((field) => {
        const id = `${idPrefix}-${field.key}`
        const value = props.data[field.key]
        const common = { id, name: field.key, disabled: props.readOnly, required: field.required }
        if (field.type === 'boolean')
          return (
            <div class="field check" key={field.key}>
              <input
                type="checkbox"
                {...common}
                checked={value === true}
                onChange={(event) => set(field.key, event.currentTarget.checked)}
              />
              <label for={id}>{field.label}</label>
            </div>
          )
        const text = value === undefined || value === null ? '' : String(value)
        const onInput = (event: { currentTarget: { value: string } }): void => set(field.key, parsed(field, event.currentTarget.value))
        return (
          <div class="field" key={field.key}>
            <label for={id}>
              {field.label}
              {field.required ? ' (required)' : ''}
            </label>
            {field.type === 'select' ? (
              <select {...common} value={text} onChange={onInput}>
                <option value="">—</option>
                {(field.options ?? []).map((option) => (
                  <option key={option} value={option}>
                    {option}
                  </option>
                ))}
              </select>
            ) : field.type === 'textarea' ? (
              <textarea {...common} rows={4} cols={50} value={text} onInput={onInput} maxLength={field.maxLength} />
            ) : field.type === 'number' || field.type === 'integer' ? (
              <input
                {...common}
                type="number"
                step={field.type === 'integer' ? 1 : 'any'}
                min={field.minimum}
                max={field.maximum}
                value={text}
                onInput={onInput}
              />
            ) : field.type === 'date' ? (
              <input {...common} type="date" value={text} onInput={onInput} />
            ) : (
              <input {...common} type="text" maxLength={field.maxLength} value={text} onInput={onInput} />
            )}
          </div>
        )
      })}
    </div>
  )
}

/** The whole data as JSON text, for a form model the renderer does not understand. */
export function JsonEditor(props: { data: Json; readOnly: boolean; onChange: (data: Json) => void; label: string }): preact.JSX.Element {
  const id = useId()
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={10}
        cols={60}
        disabled={props.readOnly}
        value={JSON.stringify(props.data, null, 2)}
        onChange={(event) => {
          try {
            const next: unknown = JSON.parse(event.currentTarget.value)
            if (isObject(next)) props.onChange(next)
          } catch {
            // Left as typed; the person sees the text did not take.
          }
        }}
      />
    </div>
  )
}

export function DataForm(props: { model: unknown; data: Json; readOnly: boolean; onChange: (data: Json) => void }): preact.JSX.Element {
  const fields = fieldsOf(props.model)
  return fields ? (
    <FormFields fields={fields} data={props.data} readOnly={props.readOnly} onChange={props.onChange} />
  ) : (
    <JsonEditor data={props.data} readOnly={props.readOnly} onChange={props.onChange} label="Data (JSON)" />
  )
}
