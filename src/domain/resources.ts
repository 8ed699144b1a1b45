/**
 * The public shapes of `/v1` resources (spec: Resources and their fields), shared by the
 * services that build them, the client that reads them, and the tests.
 */

/** A SIP trunk (spec: Trunk). The write-only `auth` never appears here; `has_credentials` reports it. */
export interface Trunk {
  /** `tk_<id>`. */
  id: string;
  name: string | null;
  /** Carrier SIP host, optionally `:port`. */
  address: string;
  /** Caller-ID numbers (E.164) the trunk may present. */
  numbers: string[];
  provider_trunk_id: string | null;
  has_credentials: boolean;
  /** Epoch seconds. */
  created_at: number;
}

/** A number record (spec: Number record); unset fields are null. */
export interface NumberRecord {
  /** `num_<id>`. */
  id: string;
  tenant_id: string;
  /** E.164. */
  number: string;
  trunk_id: string | null;
  agent_id: string | null;
  label: string | null;
  /** Epoch seconds. */
  created_at: number;
}

/** `{data, has_more, next_cursor}` (spec: Conventions). */
export interface ListResponse<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}
