//! The agents and sessions this connection created.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use a3s_code_core::{Agent, Session};
use a3s_code_protocol::ErrorObject;

use crate::errors;

#[derive(Debug)]
struct AgentEntry {
    agent: Agent,
    sessions: BTreeSet<String>,
}

/// Registry of live agents and sessions, by id.
#[derive(Debug, Default)]
pub struct State {
    next_agent: AtomicU64,
    agents: Mutex<HashMap<String, AgentEntry>>,
    sessions: Mutex<HashMap<String, Session>>,
}

impl State {
    pub fn add_agent(&self, agent: Agent) -> String {
        let id = format!(
            "agent-{}",
            self.next_agent.fetch_add(1, Ordering::Relaxed) + 1
        );
        self.agents.lock().expect("agents").insert(
            id.clone(),
            AgentEntry {
                agent,
                sessions: BTreeSet::new(),
            },
        );
        id
    }

    pub fn agent(&self, id: &str) -> Result<Agent, ErrorObject> {
        self.agents
            .lock()
            .expect("agents")
            .get(id)
            .map(|entry| entry.agent.clone())
            .ok_or_else(|| errors::agent_not_found(id))
    }

    /// Registers a built session under its agent; refuses a duplicate id.
    pub fn add_session(&self, agent_id: &str, session: Session) -> Result<(), ErrorObject> {
        let id = session.session_id().to_string();
        let mut sessions = self.sessions.lock().expect("sessions");
        if sessions.contains_key(&id) {
            return Err(ErrorObject::invalid_params(format!(
                "session {id} is already open"
            )));
        }
        let mut agents = self.agents.lock().expect("agents");
        let entry = agents
            .get_mut(agent_id)
            .ok_or_else(|| errors::agent_not_found(agent_id))?;
        entry.sessions.insert(id.clone());
        sessions.insert(id, session);
        Ok(())
    }

    pub fn session(&self, id: &str) -> Result<Session, ErrorObject> {
        self.sessions
            .lock()
            .expect("sessions")
            .get(id)
            .cloned()
            .ok_or_else(|| errors::session_not_found(id))
    }

    /// Removes a session; the caller closes it.
    pub fn remove_session(&self, id: &str) -> Result<Session, ErrorObject> {
        let session = self
            .sessions
            .lock()
            .expect("sessions")
            .remove(id)
            .ok_or_else(|| errors::session_not_found(id))?;
        for entry in self.agents.lock().expect("agents").values_mut() {
            entry.sessions.remove(id);
        }
        Ok(session)
    }

    /// Removes an agent and returns its sessions for closing.
    pub fn remove_agent(&self, id: &str) -> Result<(Agent, Vec<Session>), ErrorObject> {
        let entry = self
            .agents
            .lock()
            .expect("agents")
            .remove(id)
            .ok_or_else(|| errors::agent_not_found(id))?;
        let mut sessions = self.sessions.lock().expect("sessions");
        let closed = entry
            .sessions
            .iter()
            .filter_map(|sid| sessions.remove(sid))
            .collect();
        Ok((entry.agent, closed))
    }

    /// Closes everything (shutdown and end of input).
    pub async fn close_all(&self) {
        let sessions: Vec<Session> = self
            .sessions
            .lock()
            .expect("sessions")
            .drain()
            .map(|(_, s)| s)
            .collect();
        let agents: Vec<Agent> = self
            .agents
            .lock()
            .expect("agents")
            .drain()
            .map(|(_, e)| e.agent)
            .collect();
        for session in sessions {
            session.close().await;
        }
        for agent in agents {
            agent.close().await;
        }
    }

    pub fn session_count(&self) -> usize {
        self.sessions.lock().expect("sessions").len()
    }
}
