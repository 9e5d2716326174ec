/** An AI answer engine asked a prompt: the port scheduled runs collect answers through. */
export interface AnswerEngine {
  ask(request: { model: string; prompt: string; location: string }): Promise<{ text: string; citations: string[] }>;
}
