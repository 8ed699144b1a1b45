/**
 * What the shipped outbound agents (config/agents/) need to open a session: their
 * `required_context` and, since their identity check says `{{customer_name}}`, a customer name.
 * Tests that place calls or open sessions of them start from these bodies.
 */

/** The context `ag_emi_reminder` and `ag_emi_reminder_hi` require. */
export const EMI_CONTEXT = { emi_amount: '12,500', due_date: '25 November', loan_last4: '4321' } as const;

/** The fields of a `POST /v1/calls` or `POST /v1/sessions` body that open `ag_emi_reminder`. */
export const EMI = { agent_id: 'ag_emi_reminder', customer_name: 'Ravi Kumar', context: EMI_CONTEXT } as const;

/** The context `ag_delivery_confirmation` requires. */
export const DELIVERY_CONTEXT = { seller_name: 'ShopKart', delivery_date: 'tomorrow, the 14th' } as const;

/** The fields of a `POST /v1/calls` or `POST /v1/sessions` body that open `ag_delivery_confirmation`. */
export const DELIVERY = { agent_id: 'ag_delivery_confirmation', customer_name: 'Asha Rao', context: DELIVERY_CONTEXT } as const;
