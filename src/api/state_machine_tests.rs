//! The supervisor's state machine on a fake process, beside the tests on
//! real ones: a fake leader exits only when the test says so (or on a
//! signal it does not ignore), so what happens at a timeout, during a
//! stop's grace, and when a stop and an exit race is decided by the test,
//! not by timing luck.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::os::reaper::Exit;
use crate::shells::fake::{FakeProcess, OnTerm};
use crate::{BashTools, CallError, Caller, Command, Outcome, ShellId, TaskStatus, Tasks};
use nix::sys::signal::Signal;

const LONG: Duration = Duration::from_secs(60);

fn tools(on_term: OnTerm, grace: Duration) -> (BashTools, Arc<FakeProcess>, Tasks) {
    let fake = Arc::new(FakeProcess::new(on_term));
    let tasks = Tasks::new();
    let tools = BashTools::builder()
        .kill_grace(grace)
        .tasks(tasks.clone())
        .build_with(fake.clone())
        .unwrap();
    (tools, fake, tasks)
}

fn background(tools: &BashTools, command: &str) -> ShellId {
    match tools
        .run(&Command::new(command).background(true), &Caller::default())
        .unwrap()
    {
        Outcome::Background(b) => b.id().clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_command_still_running_at_its_timeout_moves_to_the_background_then() {
    let (tools, fake, tasks) = tools(OnTerm::Exit, LONG);
    let inbox = tasks.subscribe("main");
    let timeout = Duration::from_millis(50);
    let started = Instant::now();
    let outcome = tools
        .run(&Command::new("never").timeout(timeout), &Caller::default())
        .unwrap();
    assert!(started.elapsed() >= timeout, "moved before its timeout");
    let Outcome::Background(b) = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(b.after(), Some(timeout));
    assert_eq!(b.id().as_str(), "bash_1");
    assert_eq!(tools.status(b.id()).unwrap().status(), TaskStatus::Running);
    // It was not signalled: moving is not stopping.
    let pid = fake.pid_of("never").unwrap();
    assert!(fake.signals(pid).is_empty());
    assert_eq!(tools.background_pids(), vec![pid]);
    // Its end is notified, once.
    assert!(fake.exit(pid, Exit::Code(0)));
    let n = inbox.recv_timeout(LONG).unwrap();
    assert_eq!(
        (n.task_id.as_str(), n.status),
        ("bash_1", Some(TaskStatus::Completed))
    );
    assert!(inbox.try_recv().is_err());
}

#[test]
fn a_command_that_exits_before_its_timeout_answers_with_its_exit() {
    let (tools, fake, _tasks) = tools(OnTerm::Exit, LONG);
    let pending = tools.run_f(&Command::new("quick").timeout(LONG), &Caller::default());
    let pid = fake.wait_spawned("quick");
    assert!(!pending.is_ready());
    fake.exit(pid, Exit::Code(3));
    match pending.wait().unwrap() {
        Outcome::Exited(e) => assert_eq!(e.code(), 3),
        other => panic!("{other:?}"),
    }
    // A foreground command that ended leaves no record behind.
    assert!(tools.background_pids().is_empty());
}

#[test]
fn stop_sends_term_and_nothing_more_to_a_command_that_obeys() {
    let (tools, fake, _tasks) = tools(OnTerm::Exit, LONG);
    let id = background(&tools, "obeys");
    let info = tools.kill(&id).unwrap();
    assert_eq!(info.status(), TaskStatus::Killed);
    assert_eq!(info.exit_code(), Some(128 + 15));
    let pid = fake.pid_of("obeys").unwrap();
    assert_eq!(fake.signals(pid), vec![Signal::SIGTERM]);
}

#[test]
fn stop_sends_kill_after_the_grace_to_a_command_ignoring_term() {
    let grace = Duration::from_millis(100);
    let (tools, fake, _tasks) = tools(OnTerm::Ignore, grace);
    let id = background(&tools, "stubborn");
    let started = Instant::now();
    let info = tools.kill(&id).unwrap();
    assert!(started.elapsed() >= grace, "KILL before the grace ended");
    assert_eq!(info.exit_code(), Some(128 + 9));
    let pid = fake.pid_of("stubborn").unwrap();
    // CONT after TERM, so a stopped process could handle the TERM.
    assert_eq!(
        fake.signals(pid),
        vec![Signal::SIGTERM, Signal::SIGCONT, Signal::SIGKILL]
    );
}

#[test]
fn a_stop_and_an_exit_that_race_send_exactly_one_notification() {
    for round in 0..50 {
        let (tools, fake, tasks) = tools(OnTerm::Ignore, Duration::from_millis(20));
        let inbox = tasks.subscribe("main");
        let id = background(&tools, "racer");
        let pid = fake.pid_of("racer").unwrap();
        let stopper = {
            let tools = tools.clone();
            let id = id.clone();
            std::thread::spawn(move || tools.kill(&id))
        };
        fake.exit(pid, Exit::Code(0));
        // The stop either won (killed) or found it ended (not running).
        match stopper.join().unwrap() {
            Ok(info) => assert_eq!(info.status(), TaskStatus::Killed, "round {round}"),
            Err(CallError::NotRunning { status, .. }) => {
                assert_eq!(status, TaskStatus::Completed, "round {round}")
            }
            Err(e) => panic!("round {round}: {e:?}"),
        }
        let n = inbox.recv_timeout(LONG).unwrap();
        assert_eq!(n.task_id, id.as_str());
        assert!(inbox.try_recv().is_err(), "round {round}: notified twice");
    }
}

#[test]
fn stop_all_stops_everything_and_the_tools_stay_usable() {
    let (tools, fake, tasks) = tools(OnTerm::Exit, LONG);
    let inbox = tasks.subscribe("main");
    let ids: Vec<ShellId> = (0..5)
        .map(|i| background(&tools, &format!("s{i}")))
        .collect();
    tools.stop_all();
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(tools.status(id).unwrap().status(), TaskStatus::Killed);
        let pid = fake.pid_of(&format!("s{i}")).unwrap();
        assert_eq!(fake.signals(pid), vec![Signal::SIGTERM]);
        assert!(matches!(
            tools.kill(id),
            Err(CallError::NotRunning {
                status: TaskStatus::Killed,
                ..
            })
        ));
    }
    for _ in 0..5 {
        assert_eq!(
            inbox.recv_timeout(LONG).unwrap().status,
            Some(TaskStatus::Killed)
        );
    }
    // A second stop_all finds nothing; a new command starts a new shell.
    tools.stop_all();
    assert_eq!(background(&tools, "after").as_str(), "bash_6");
}

#[test]
fn a_failed_spawn_leaves_no_record_no_registry_entry_and_no_descriptor() {
    let (tools, fake, tasks) = tools(OnTerm::Exit, LONG);
    fake.fail_next_spawn();
    let err = tools
        .run(&Command::new("x").background(true), &Caller::default())
        .unwrap_err();
    assert!(matches!(err, CallError::SpawnFailed(_)), "{err:?}");
    assert!(tasks.list().is_empty());
    assert!(tools.background_pids().is_empty());
    assert!(matches!(
        tools.status(&ShellId::from("bash_1")),
        Err(CallError::UnknownId(_))
    ));
    // Nor a descriptor: the output cap watched the file with one of its
    // own, which only the command's end gave back.
    assert_eq!(
        reading_under(tools.output_directory()),
        Vec::<String>::new()
    );
}

/// Our descriptors open for reading on files under `dir` (the output cap
/// reads a command's file; the spare file kept for the next is written).
fn reading_under(dir: &std::path::Path) -> Vec<String> {
    let mut reading = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        let fd = entry.file_name().to_string_lossy().into_owned();
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u32::from_str_radix(f.trim(), 8).ok());
        let read_only = flags.is_some_and(|f| f & 3 == 0);
        if target.starts_with(dir) && target != dir && read_only {
            reading.push(format!("{fd} {}", target.display()));
        }
    }
    reading
}

#[test]
fn after_close_every_call_is_an_error_and_nothing_starts() {
    let (tools, fake, _tasks) = tools(OnTerm::Exit, LONG);
    let id = background(&tools, "before");
    tools.close();
    assert_eq!(
        tools.run(&Command::new("later"), &Caller::default()),
        Err(CallError::Closed)
    );
    assert_eq!(tools.status(&id), Err(CallError::Closed));
    assert!(fake.pid_of("later").is_none());
}

#[test]
fn a_huge_timeout_is_no_deadline_not_a_panic() {
    let (tools, fake, _tasks) = tools(OnTerm::Exit, Duration::MAX);
    let pending = tools.run_f(
        &Command::new("slow").timeout(Duration::MAX),
        &Caller::default(),
    );
    let pid = fake.wait_spawned("slow");
    fake.exit(pid, Exit::Code(0));
    assert!(matches!(pending.wait(), Ok(Outcome::Exited(_))));
    let id = background(&tools, "waited");
    let pid = fake.pid_of("waited").unwrap();
    let waiter = {
        let tools = tools.clone();
        let id = id.clone();
        std::thread::spawn(move || tools.wait(&id, Duration::MAX))
    };
    fake.exit(pid, Exit::Code(1));
    assert_eq!(waiter.join().unwrap().unwrap().status(), TaskStatus::Failed);
}

#[test]
fn kill_answers_once_the_table_knows_the_shell_ended() {
    // The tree is gone within the grace, but its leader's exit reaches the
    // table later (a reaper running behind, on a loaded machine): the
    // answer waits for it, so a read right after sees the shell killed.
    let (tools, fake, _tasks) = tools(OnTerm::GoneUnrecorded, Duration::ZERO);
    let id = background(&tools, "late");
    let pid = fake.pid_of("late").unwrap();
    let deliver = {
        let fake = fake.clone();
        std::thread::spawn(move || {
            let deadline = Instant::now() + LONG;
            while !fake.signals(pid).contains(&Signal::SIGTERM) {
                assert!(Instant::now() < deadline, "never signalled");
                std::thread::yield_now();
            }
            fake.exit(pid, Exit::Signal(Signal::SIGTERM as i32))
        })
    };
    let info = tools.kill(&id).unwrap();
    assert_eq!(info.status(), TaskStatus::Killed);
    assert!(deliver.join().unwrap());
}
