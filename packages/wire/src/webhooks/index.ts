// What a webhook receiver or sender outside the server needs (`toolbus listen --forward-to`,
// receivers written in TypeScript): the body, the id and the Standard Webhooks signature,
// exactly as the server's subscriptions make them. No SDK client, no I/O.
export { deliveryBody } from "./delivery-body";
export {
  isWebhookSecret,
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  type WebhookHeaders,
  type WebhookVerification,
  webhookHeaders,
  webhookIdOf,
} from "./signature";
