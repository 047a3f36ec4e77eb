package agui

// The begun and not yet ended text message, tool call and step of a run:
// every one is ended before the run ends, as AG-UI's verifier requires.

// openStep begins the step k named name, ending another begun step.
func (f *follower) openStep(k stepKey, name string) error {
	if f.step != nil && f.step.key == k {
		return nil
	}
	if err := f.closeStep(); err != nil {
		return err
	}
	f.step = &open{key: k, id: name}
	return f.out.send(Event{Type: StepStarted, StepName: name})
}

func (f *follower) closeStep() error {
	if f.step == nil {
		return nil
	}
	name := f.step.id
	f.step = nil
	return f.out.send(Event{Type: StepFinished, StepName: name})
}

// startTool begins step k and its tool call of action.
func (f *follower) startTool(k stepKey, action string) error {
	if err := f.closeTool(); err != nil {
		return err
	}
	if err := f.openStep(k, action); err != nil {
		return err
	}
	f.tool = &open{key: k, id: f.callID(k)}
	return f.out.send(Event{Type: ToolCallStart, ToolCallID: f.tool.id, ToolCallName: action})
}

// endTool sends args (when the call's arguments were not streamed) and
// ends the tool call.
func (f *follower) endTool(args string) error {
	if f.tool == nil {
		return nil
	}
	if args != "" && f.tool.sent == "" {
		if err := f.out.send(Event{Type: ToolCallArgs, ToolCallID: f.tool.id, Delta: args}); err != nil {
			return err
		}
	}
	id := f.tool.id
	f.tool = nil
	return f.out.send(Event{Type: ToolCallEnd, ToolCallID: id})
}

// closeTool ends a begun tool call and its step.
func (f *follower) closeTool() error {
	if f.tool == nil {
		return nil
	}
	if err := f.endTool(""); err != nil {
		return err
	}
	return f.closeStep()
}

func (f *follower) closeText() error {
	if f.text == nil {
		return nil
	}
	id := f.text.id
	f.text = nil
	return f.out.send(Event{Type: TextMessageEnd, MessageID: id})
}

// closeAll ends whatever is begun.
func (f *follower) closeAll() error {
	if err := f.closeText(); err != nil {
		return err
	}
	if err := f.closeTool(); err != nil {
		return err
	}
	return f.closeStep()
}
