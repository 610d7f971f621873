import APNSCore
import BeckonProtocol
import Foundation

extension DevicePlanner {
    /// Rule 6: a call (whatever its urgency) goes to the VoIP token at once. Without one, it rings by alerts (collapse id
    /// = call id) every `callRingInterval` until `callEnded` or `callTimeout`.
    ///
    /// Calls are pushed even to a connected device. A sync session does not prove the app is in
    /// the foreground: iOS suspends a backgrounded app within seconds and its socket dies silently,
    /// so a call sent only over sync could ring nowhere. PushKit and CallKit are what ring reliably;
    /// a foreground app that already rings in-app reports the same call to CallKit (or, on
    /// iOS 26.4+, is told `mustReport == NO`, apns.md E.6) and silences ringing alerts in
    /// `willPresent` (apns.md E.5). A duplicate of a ringing call is ignored.
    mutating func callArrived(
        _ call: PlannedMessage, device: PlannerDevice, now: Date, newPushID: () -> UUID
    ) -> [PlannerAction] {
        guard !call.isExpired(at: now), !calls.contains(where: { $0.id == call.id }) else { return [] }
        let factory = NotificationFactory(policy: policy, device: device, now: now)
        if device.hasVoIPToken {
            // After the VoIP push the app reports to CallKit and connects; the call's end reaches it
            // over sync, so no further push is planned (a VoIP push may only announce a new call).
            let id = newPushID()
            var until = now.addingTimeInterval(policy.callTimeout)
            if let expiresAt = call.expiresAt, expiresAt < until { until = expiresAt }
            return [
                plan(
                    .voip(factory.callVoIP(id: id, call: call)), id: id, token: .voip, reason: .callVoIP,
                    strategy: factory.strategy, messageIDs: [call.id], now: now, ringing: (call.id, until)
                )
            ]
        }
        guard device.hasRemoteToken else { return [] }
        var timeout = now.addingTimeInterval(policy.callTimeout)
        if let expiresAt = call.expiresAt, expiresAt < timeout { timeout = expiresAt }
        let ringing = RingingCall(message: call, nextRingAt: now, timeoutAt: timeout)
        calls.append(ringing)
        return ringCalls(factory: factory, newPushID: newPushID)
    }

    /// The call ended. Answered or declined here: the user is at this device, nothing to push.
    /// Answered or declined elsewhere: replace the ringing alert (same collapse id) with one that
    /// says so. Ended by the caller: a missed call.
    public mutating func callEnded(
        callID: String, outcome: CallOutcome, device: PlannerDevice, now: Date, newPushID: () -> UUID = { UUID.timeOrdered() }
    ) -> [PlannerAction] {
        guard let index = calls.firstIndex(where: { $0.id == callID }) else { return [] }
        let call = calls.remove(at: index)
        let reason: PushReason
        switch outcome {
        case .answeredHere, .declinedHere: return []
        case .answeredElsewhere: reason = .answeredElsewhere
        case .declinedElsewhere: reason = .declinedElsewhere
        case .endedByCaller: reason = .missedCall
        }
        guard device.hasRemoteToken else { return [] }
        let factory = NotificationFactory(policy: policy, device: device, now: now)
        return [sendCallAlert(reason, call: call, factory: factory, newPushID: newPushID)]
    }

    /// Rings every call whose ring is due, and turns timed-out calls into missed calls.
    mutating func ringCalls(factory: NotificationFactory, newPushID: () -> UUID) -> [PlannerAction] {
        let now = factory.now
        var actions: [PlannerAction] = []
        var stillRinging: [RingingCall] = []
        for var call in calls {
            if now >= call.timeoutAt {
                if factory.device.hasRemoteToken {
                    actions.append(sendCallAlert(.missedCall, call: call, factory: factory, newPushID: newPushID))
                }
                continue
            }
            if now >= call.nextRingAt, factory.device.hasRemoteToken {
                actions.append(sendCallAlert(.callRing, call: call, factory: factory, newPushID: newPushID))
                // From now, not from the missed ring time: a late driver rings once, not in a burst.
                call.nextRingAt = now.addingTimeInterval(policy.callRingInterval)
            }
            stillRinging.append(call)
        }
        calls = stillRinging
        return actions
    }

    private mutating func sendCallAlert(
        _ reason: PushReason, call: RingingCall, factory: NotificationFactory, newPushID: () -> UUID
    ) -> PlannerAction {
        let id = newPushID()
        return plan(
            .alert(factory.callAlert(id: id, reason: reason, call: call)), id: id, token: .remote, reason: reason,
            strategy: factory.strategy, messageIDs: [call.id], now: factory.now,
            ringing: reason == .callRing ? (call.id, call.timeoutAt) : nil
        )
    }
}
