// Kysely types of the SMS log (src/db/migrations/0032_locales).
export interface SmsMessagesTable {
  id: string;
  sent_at: Date;
  recipient: string;
  template: string;
  locale: string;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  status: 'SENT' | 'FAILED';
  text: string | null;
}

export interface SmsTables {
  sms_messages: SmsMessagesTable;
}
