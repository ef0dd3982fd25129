// A custom executor written with a third-party executor library: mesos-go's
// v1 executor API (Debian's golang-github-mesos-mesos-go-dev), speaking
// protobuf to the agent. e2e_executors runs it as test_executor is run:
//
//	LAUNCH        TASK_RUNNING; a task named "finish..." then TASK_FINISHED
//	KILL          TASK_KILLED
//	MESSAGE       MESSAGE back: "echo:" and the data
//	ACKNOWLEDGED  forgets the update
//	SHUTDOWN      TASK_KILLED for every running task, then exit 0
//
// Every step is logged on stdout with the prefix "go_executor: ".
package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/pborman/uuid"
)

type state struct {
	cli     *httpcli.Client
	opts    executor.CallOptions
	exID    mesos.ExecutorID
	running map[string]mesos.TaskInfo
	unacked map[string]executor.Call_Update
	quit    bool
}

func say(format string, args ...interface{}) {
	fmt.Printf("go_executor: "+format+"\n", args...)
}

func (s *state) send(c *executor.Call) error {
	resp, err := s.cli.Do(c.With(s.opts...))
	if resp != nil {
		resp.Close()
	}
	return err
}

func (s *state) update(id mesos.TaskID, st mesos.TaskState) {
	status := mesos.TaskStatus{
		TaskID:     id,
		State:      st.Enum(),
		Source:     mesos.SOURCE_EXECUTOR.Enum(),
		ExecutorID: &s.exID,
		UUID:       []byte(uuid.NewRandom()),
	}
	call := calls.Update(status)
	err := s.send(call)
	say("UPDATE %s %s: %v", id.Value, st.String(), err)
	if err == nil {
		s.unacked[string(status.UUID)] = *call.Update
	}
}

func (s *state) handle(e *executor.Event) {
	switch e.GetType() {
	case executor.Event_SUBSCRIBED:
		say("SUBSCRIBED")
	case executor.Event_LAUNCH:
		t := e.Launch.Task
		say("LAUNCH %s", t.TaskID.Value)
		s.running[t.TaskID.Value] = t
		s.update(t.TaskID, mesos.TASK_RUNNING)
		if strings.HasPrefix(t.Name, "finish") {
			delete(s.running, t.TaskID.Value)
			s.update(t.TaskID, mesos.TASK_FINISHED)
		}
	case executor.Event_KILL:
		id := e.Kill.TaskID
		say("KILL %s", id.Value)
		if _, ok := s.running[id.Value]; ok {
			delete(s.running, id.Value)
			s.update(id, mesos.TASK_KILLED)
		}
	case executor.Event_ACKNOWLEDGED:
		say("ACKNOWLEDGED %s", e.Acknowledged.TaskID.Value)
		delete(s.unacked, string(e.Acknowledged.UUID))
	case executor.Event_MESSAGE:
		say("MESSAGE %s", string(e.Message.Data))
		err := s.send(calls.Message([]byte("echo:" + string(e.Message.Data))))
		say("MESSAGE sent: %v", err)
	case executor.Event_SHUTDOWN:
		say("SHUTDOWN")
		for _, t := range s.running {
			s.update(t.TaskID, mesos.TASK_KILLED)
		}
		s.running = map[string]mesos.TaskInfo{}
		s.quit = true
	default:
		say("%s", e.GetType().String())
	}
}

func main() {
	cfg, err := config.FromEnv()
	if err != nil {
		say("bad environment: %v", err)
		os.Exit(2)
	}
	say("executor %s of framework %s, agent %s, sandbox %s", cfg.ExecutorID,
		cfg.FrameworkID, cfg.AgentEndpoint, cfg.Sandbox)
	endpoint := url.URL{Scheme: "http", Host: cfg.AgentEndpoint, Path: "/api/v1/executor"}
	cliOpts := []httpcli.Opt{
		httpcli.Endpoint(endpoint.String()),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(httpcli.Timeout(10 * time.Second))),
	}
	// The token the agent gave this executor (--executor_secret_key), sent
	// on every call as Mesos's own executor library does; mesos-go does not
	// read it by itself.
	if token := os.Getenv("MESOS_EXECUTOR_AUTHENTICATION_TOKEN"); token != "" {
		cliOpts = append(cliOpts,
			httpcli.DefaultHeader("Authorization", "Bearer "+token))
	}
	s := &state{
		cli:     httpcli.New(cliOpts...),
		opts:    executor.CallOptions{calls.Framework(cfg.FrameworkID), calls.Executor(cfg.ExecutorID)},
		exID:    mesos.ExecutorID{Value: cfg.ExecutorID},
		running: map[string]mesos.TaskInfo{},
		unacked: map[string]executor.Call_Update{},
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var tasks []mesos.TaskInfo
		for _, t := range s.running {
			tasks = append(tasks, t)
		}
		var updates []executor.Call_Update
		for _, u := range s.unacked {
			updates = append(updates, u)
		}
		sub := calls.Subscribe(tasks, updates).With(s.opts...)
		resp, err := s.cli.Do(sub, httpcli.Close(true))
		if err == nil {
			say("SUBSCRIBE answered")
			for err == nil && !s.quit {
				var e executor.Event
				if err = resp.Decode(&e); err == nil {
					s.handle(&e)
				}
			}
			resp.Close()
			deadline = time.Now().Add(60 * time.Second)
		}
		if s.quit {
			say("exiting")
			os.Exit(0)
		}
		if err != nil && err != io.EOF {
			say("stream: %v", err)
		}
		if !cfg.Checkpoint {
			say("stream ended and not checkpointing: exiting")
			os.Exit(1)
		}
		time.Sleep(200 * time.Millisecond)
	}
	say("agent did not come back: exiting")
	os.Exit(1)
}
